/// One request's exchange on an HTTP/2 connection, as ``H2Session`` fills it in: the body to
/// send and how much of it went, then the answer's status, header lines and body.
///
/// Confined to the thread of the connection it is on.
final class H2Stream {
    let body: [UInt8]
    /// How many bytes of ``body`` nghttp2 has taken.
    var bodySent = 0
    /// The `:status` pseudo-header, 0 until it arrives.
    var status = 0
    /// The response's header lines, `name: value` CRLF each, pseudo-headers left out (what
    /// ``HTTPResponse`` parses when asked).
    var headerLines: [UInt8] = []
    var responseBody: [UInt8] = []

    init(body: [UInt8]) { self.body = body }

    /// Room for a usual answer's header lines and body (FCM's are under 200 bytes each).
    static let answerCapacity = 256
}
