/// Which connections are dead: one that has had a request waiting for ``silence`` and has
/// received nothing in that time. Pure: how long each connection has been silent and how long its
/// oldest request has waited go in, sockets come out; ``CurlMultiLoop`` measures the silence
/// (``TCPSocketState``) and closes what this names.
///
/// A connection dies without a word when a NAT or a load balancer on the way forgets it, or a
/// middlebox or the peer's host fails: no RST, no FIN, every packet dropped. The kernel gives up
/// only after 15 retransmissions, about 15 minutes, and libcurl 7.88 puts every new request on
/// the connection it believes alive, each until its own timeout: a request that timed out left
/// the connection in place, and its retry took the same one (`DeadConnectionTests`). So liveness
/// is the client's to judge:
/// - **Not the kernel's keepalive or `TCP_USER_TIMEOUT`:** they watch only the first hop, and
///   an egress proxy whose tunnel went silent still acknowledges every packet.
/// - **Not an HTTP/2 PING:** libcurl 7.88 sends none on request (`curl_easy_upkeep` works on an
///   easy handle's own connection cache only, not a multi handle's).
/// - **Silence with a request waiting**, as gRPC's keepalive and Go's `ReadIdleTimeout` judge
///   it, without their probe: an FCM connection with a request waiting answers in well under a
///   second, so 10 s of nothing at all says the path is gone. A connection with nothing waiting
///   is never judged: an idle one may be silent for as long as it likes.
struct ConnectionLiveness: Sendable {
    /// How long a connection with a request waiting may receive nothing.
    let silence: Duration

    /// A connection as the check sees it.
    struct Connection: Sendable, Equatable {
        var socket: Int32
        /// Since its last data from the peer (or since it was established).
        var silentFor: Duration
        /// How long its oldest request has waited; nil: none waits on it.
        var oldestRequest: Duration?
    }

    /// The sockets of the connections that are dead: a request has waited ``silence`` or
    /// longer, and nothing arrived for as long.
    func dead(_ connections: [Connection]) -> [Int32] {
        connections.filter { c in c.silentFor >= silence && (c.oldestRequest.map { $0 >= silence } ?? false) }.map(\.socket)
    }

    /// Whether a look at the requests could find a dead connection: one has been silent for
    /// ``silence`` (the requests are looked at only then).
    func anySilent(_ silences: some Sequence<Duration>) -> Bool {
        silences.contains { $0 >= silence }
    }

    /// A request that timed out after waiting `waited`, on a connection silent for `silentFor`:
    /// nothing arrived on it since the request went, so it is dead too, however short the
    /// request's timeout (a retry would take the same connection).
    static func diedUnder(requestThatWaited waited: Duration, silentFor: Duration) -> Bool {
        silentFor >= waited
    }
}
