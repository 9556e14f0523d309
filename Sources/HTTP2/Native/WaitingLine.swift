import DequeModule

/// The requests to one server (host and port) waiting for a stream on a ``NativeLoop``, in the
/// order they came, and since when the first of them has waited. One line per server, so that
/// requests to a server with a free stream never wait behind those to another whose connections
/// are all busy (FCM's sends and the token endpoint's, say).
///
/// Confined to its loop's thread.
final class WaitingLine {
    let host: String
    let port: Int
    private(set) var transfers = Deque<NativeTransfer>()
    /// Since when requests have waited in it without a break; nil while it is empty.
    private(set) var since: ContinuousClock.Instant?

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    func serves(_ target: NativeTarget) -> Bool { target.port == port && target.host == host }

    func append(_ transfer: NativeTransfer) { transfers.append(transfer) }

    /// Puts a refused request back first in line: it was sent before those waiting now.
    func putBack(_ transfer: NativeTransfer) { transfers.prepend(transfer) }

    var first: NativeTransfer? { transfers.first }

    func removeFirst() { transfers.removeFirst() }

    /// How long the line has waited at `now` (zero when it is empty), and notes since when.
    func waited(at now: ContinuousClock.Instant) -> Duration {
        guard !transfers.isEmpty else {
            since = nil
            return .zero
        }
        let start = since ?? now
        since = start
        return now - start
    }

    /// Fails every request in it with `error`.
    func failAll(_ error: HTTP2ClientError) {
        let failed = transfers
        transfers.removeAll()
        for transfer in failed { transfer.complete(.failure(error)) }
    }

    /// Fails the requests past their deadline with `error(transfer)`, the others keeping their order.
    func expire(at now: ContinuousClock.Instant, _ error: (NativeTransfer) -> HTTP2ClientError) {
        guard transfers.contains(where: { $0.deadline <= now }) else { return }
        var kept = Deque<NativeTransfer>()
        for transfer in transfers {
            if transfer.deadline <= now { transfer.complete(.failure(error(transfer))) } else { kept.append(transfer) }
        }
        transfers = kept
    }
}
