/// Whether a ``NativeLoop`` opens another connection to a server, from what it has. Pure.
///
/// One connection to a server is on its way at a time (each waits for its TLS handshake), and
/// only when the requests waiting for a stream press: a request that a finishing stream takes in
/// a moment is no reason for a connection (``StreamAdmission``'s rule for libcurl). With no
/// connection to the server that takes streams (none open, or all going away), the first
/// request waiting is reason enough.
struct ConnectionDemand: Sendable, Equatable {
    let streamsPerConnection: Int
    let maxConnections: Int

    init(streamsPerConnection: Int, maxConnections: Int) {
        self.streamsPerConnection = max(1, streamsPerConnection)
        self.maxConnections = max(1, maxConnections)
    }

    /// The server's connections as the rule sees them.
    struct Server: Sendable, Equatable {
        /// One of its connections is connecting or in its TLS handshake.
        var opening: Bool
        /// Every one of them has said or been told GOAWAY (true when there are none).
        var allGoingAway: Bool
    }

    /// Requests waiting press when this many wait, or when the first has waited ``pressAfter``.
    var pressingCount: Int { max(1, streamsPerConnection / 10) }
    static let pressAfter = StreamAdmission.probeAfter

    /// With `open` connections over every server, `waiting` requests to `server` of which the
    /// first has waited `waitingFor`: open one more to it?
    func shouldOpen(open: Int, server: Server, waiting: Int, waitingFor: Duration) -> Bool {
        guard waiting > 0, open < maxConnections, !server.opening else { return false }
        return server.allGoingAway || waiting >= pressingCount || waitingFor >= Self.pressAfter
    }
}
