import Foundation

/// A plain HTTP/1.1 GET over a loopback socket (for the worker's /metrics, /healthz, /readyz).
public enum HTTPGet {
    /// How long the connect, each send and each receive may take. Without it a GET whose SYN a
    /// network-fault test's firewall drops waits for the kernel's SYN retries (about 127 s): a
    /// poll of the worker's metrics stood still that long in CI.
    public static let timeout = timeval(tv_sec: 10, tv_usec: 0)

    public static func get(port: Int, path: String) throws -> (status: Int, body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(errno)") }
        defer { close(fd) }
        var limit = timeout
        // On Linux SO_SNDTIMEO bounds a blocking connect(2) too (socket(7)).
        for option in [SO_SNDTIMEO, SO_RCVTIMEO] { setsockopt(fd, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size)) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw HarnessError("connect to port \(port): errno \(errno)") }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EAGAIN { throw HarnessError("GET \(path) on port \(port): no answer within \(timeout.tv_sec) s") }
            if n <= 0 { break }
            response.append(contentsOf: buffer[0..<n])
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let headEnd = text.range(of: "\r\n\r\n"), let status = Int(text.split(separator: " ").dropFirst().first ?? "") else {
            throw HarnessError("not an HTTP response: \(text.prefix(200))")
        }
        return (status, String(text[headEnd.upperBound...]))
    }
}
