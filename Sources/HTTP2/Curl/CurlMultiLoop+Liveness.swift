import CCurl
import Glibc
import Synchronization

// Connections that die without a word (docs/operations.md, *When a connection dies*): found by
// ``ConnectionLiveness`` from TCP_INFO, shut down, their transfers failed as dead so that the
// FCM client sends them again on a new connection.
extension CurlMultiLoop {
    /// Closes the connections ``ConnectionLiveness`` judges dead. Looks at most every
    /// ``livenessCheckInterval`` and only with requests in flight: a `getsockopt` per
    /// connection, and the requests only when one has been silent.
    func closeDeadConnections(at now: ContinuousClock.Instant) {
        guard let liveness, !active.isEmpty, now >= nextLivenessCheck else { return }
        nextLivenessCheck = now + Self.livenessCheckInterval
        let sockets = multi.connections.tcpSocketsNow
        let silences = sockets.compactMap { socket in TCPSocketState.silentFor(socket).map { (socket, $0) } }
        guard liveness.anySilent(silences.map(\.1)) else { return }
        let bySocket = transfersBySocket(sockets)
        let connections = silences.map { socket, silentFor in
            ConnectionLiveness.Connection(
                socket: socket, silentFor: silentFor, oldestRequest: bySocket[socket]?.map { now - $0.startedAt }.max())
        }
        for socket in liveness.dead(connections) {
            close(socket, asDead: bySocket[socket] ?? [], silentFor: connections.first { $0.socket == socket }?.silentFor ?? .zero)
        }
    }

    /// A transfer timed out: if its connection received nothing since the transfer was handed to
    /// libcurl, it is dead too (``ConnectionLiveness/diedUnder(requestThatWaited:silentFor:)``).
    func closeIfSilent(timedOut transfer: CurlTransfer) {
        guard liveness != nil, let port = transfer.localPort else { return }
        let sockets = multi.connections.tcpSocketsNow
        guard let socket = sockets.first(where: { TCPSocketState.localPort($0) == port }),
            let silentFor = TCPSocketState.silentFor(socket),
            ConnectionLiveness.diedUnder(requestThatWaited: .now - transfer.startedAt, silentFor: silentFor)
        else { return }
        close(socket, asDead: [transfer] + (transfersBySocket(sockets)[socket] ?? []), silentFor: silentFor)
    }

    /// The transfers in libcurl's hands on one of `sockets`, by socket: a transfer names its
    /// connection by local port (``CurlTransfer/localPort``).
    func transfersBySocket(_ sockets: Set<Int32>) -> [Int32: [CurlTransfer]] {
        var byPort: [Int: Int32] = [:]
        for socket in sockets { if let port = TCPSocketState.localPort(socket) { byPort[port] = socket } }
        var bySocket: [Int32: [CurlTransfer]] = [:]
        for transfer in active.values {
            guard let port = transfer.localPort, let socket = byPort[port] else { continue }
            bySocket[socket, default: []].append(transfer)
        }
        return bySocket
    }

    /// Shuts `socket` down and lets libcurl see it at once, before it can give the connection
    /// another request: its transfers fail (``CurlTransfer/connectionDied``), and libcurl
    /// closes the connection. Reported once (``HTTP2Client/Configuration/onDeadConnection``).
    func close(_ socket: Int32, asDead transfers: [CurlTransfer], silentFor: Duration) {
        for transfer in transfers { transfer.connectionDied = true }
        _ = Glibc.shutdown(socket, Int32(SHUT_RDWR))
        multi.socketAction(socket)
        deadConnections.add(1, ordering: .relaxed)
        let authority = transfers.first?.request.authority ?? "?"
        configuration.onDeadConnection?(DeadConnection(authority: authority, requests: transfers.count, silentFor: silentFor))
    }
}
