import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The addresses a host name stands for, from `getaddrinfo`, kept for ``ttl`` so that a loop
/// opening connection after connection asks the resolver once.
///
/// Confined to one ``NativeLoop`` thread. `getaddrinfo` blocks that thread while it asks: only
/// when a connection opens, and an IP address literal never asks.
struct NativeResolver {
    struct Address {
        var storage: sockaddr_storage
        var length: socklen_t
        var family: Int32
    }

    static let ttl: Duration = .seconds(30)
    private var cache: [String: (addresses: [Address], until: ContinuousClock.Instant)] = [:]

    /// The addresses of `host` at `port`, IPv4 first.
    mutating func resolve(_ host: String, port: Int) -> Result<[Address], HTTP2ClientError> {
        let key = "\(host):\(port)"
        if let hit = cache[key], hit.until > .now { return .success(hit.addresses) }
        var hints = addrinfo()
        hints.ai_socktype = LinuxSocket.stream
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            return .failure(
                HTTP2ClientError(
                    code: .couldNotConnect, message: "could not resolve \(host): \(String(cString: gai_strerror(status)))", isRetryable: true))
        }
        defer { freeaddrinfo(list) }
        var addresses: [Address] = []
        var next: UnsafeMutablePointer<addrinfo>? = list
        while let info = next {
            if let address = info.pointee.ai_addr {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(info.pointee.ai_addrlen)))
                }
                addresses.append(Address(storage: storage, length: info.pointee.ai_addrlen, family: info.pointee.ai_family))
            }
            next = info.pointee.ai_next
        }
        addresses.sort { $0.family == AF_INET && $1.family != AF_INET }
        cache[key] = (addresses, .now + Self.ttl)
        return .success(addresses)
    }
}
