/// How many more transfers one multi handle may take now, so that libcurl opens connections
/// one at a time as streams fill up, never a connection per waiting transfer. Pure.
///
/// libcurl multiplexes a transfer onto a connection only once that connection has negotiated
/// HTTP/2; until then, every other transfer added finds no connection to share and opens one
/// of its own. 250 requests added at once opened 51 connections, 48 of them for one request
/// each (libcurl 7.88, measured in `HTTP2ClientTests`). So transfers go to libcurl only up to
/// the streams of the connections it has, plus one *probe* when they are all busy: the probe
/// makes libcurl open one more connection, and until it has an answer, nothing more goes in.
struct StreamAdmission: Sendable {
    let streamsPerConnection: Int
    let maxConnections: Int
    /// A transfer that may be opening a connection has not finished.
    private(set) var probing = false

    init(streamsPerConnection: Int, maxConnections: Int) {
        self.streamsPerConnection = max(1, streamsPerConnection)
        self.maxConnections = max(1, maxConnections)
    }

    /// Transfers waiting for a stream open another connection only when this many wait, or
    /// when they have waited ``probeAfter``: one that a finishing stream will take in a moment
    /// is no reason for a connection.
    var probeWaiting: Int { max(1, streamsPerConnection / 10) }
    static let probeAfter: Duration = .milliseconds(100)

    /// How many transfers to add with `active` in libcurl, `openConnections` open and `waiting`
    /// transfers waiting for `waitingFor`; whether the last of them is a probe.
    func room(active: Int, openConnections: Int, waiting: Int, waitingFor: Duration) -> (count: Int, probe: Bool) {
        let free = freeStreams(active: active, openConnections: openConnections)
        if free > 0 { return (free, false) }
        let pressed = waiting >= probeWaiting || (waiting > 0 && waitingFor >= Self.probeAfter)
        if pressed, !probing, openConnections < maxConnections { return (1, true) }
        return (0, false)
    }

    /// No stream is free for another transfer.
    func isFull(active: Int, openConnections: Int) -> Bool {
        freeStreams(active: active, openConnections: openConnections) <= 0
    }

    /// Streams of the connections libcurl has negotiated, not in use. While a probe is out, its
    /// connection (if it opened one) cannot take more yet.
    private func freeStreams(active: Int, openConnections: Int) -> Int {
        let usable = min(probing ? max(openConnections - 1, 0) : openConnections, maxConnections)
        return usable * streamsPerConnection - active
    }

    mutating func probeStarted() { probing = true }
    mutating func probeFinished() { probing = false }
}
