#if canImport(Glibc)
    import Glibc
#endif

/// What the kernel knows of a connected TCP socket: its local port, and how long since data last
/// arrived on it (`TCP_INFO`'s `tcpi_last_data_recv`, kept by the kernel for every socket, so
/// nothing in the client's hot path counts reads).
enum TCPSocketState {
    /// The socket's local port (`getsockname(2)`), nil if it has none.
    static func localPort(_ socket: Int32) -> Int? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        guard named == 0 else { return nil }
        let port: UInt16 =
            switch Int32(address.ss_family) {
            case AF_INET: withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port } }
            case AF_INET6: withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port } }
            default: 0
            }
        return port == 0 ? nil : Int(UInt16(bigEndian: port))
    }

    /// How long since data last arrived from the peer (since the connection was established, if
    /// none has); nil if the kernel does not say.
    static func silentFor(_ socket: Int32) -> Duration? {
        var info = tcp_info()
        var length = socklen_t(MemoryLayout<tcp_info>.size)
        guard getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return nil }
        return .milliseconds(Int64(info.tcpi_last_data_recv))
    }
}
