/// One request on its way through a ``NativeLoop``: the request, its exchange on a stream
/// (``H2Stream``), when it must be answered by, and what to call with its outcome.
///
/// `@unchecked Sendable`: created by the sending task and handed to the loop's thread once,
/// through the loop's locked queue; from then on only that thread touches it.
final class NativeTransfer: @unchecked Sendable {
    /// Called once, on the loop's thread (or the submitting one, when the loop is shut down):
    /// it must not block.
    typealias Completion = @Sendable (Result<HTTPResponse, HTTP2ClientError>) -> Void

    let request: HTTPRequest
    let target: NativeTarget
    /// Its exchange; a new one if it is sent again (``restart()``).
    private(set) var stream: H2Stream
    private let completion: Completion
    /// Answered by then, or failed with `.timeout`: its timeout from when it was handed to the
    /// loop, or for a paced one from its slot (``slotCame(at:)``); never after its
    /// ``HTTPRequest/notAfter``.
    private(set) var deadline: ContinuousClock.Instant
    private let timeout: Duration
    /// When it was put on a stream, if it has been.
    var startedAt: ContinuousClock.Instant?
    /// When it may go, if it is paced and its slot is reserved (``RequestPacer``).
    var slot: ContinuousClock.Instant?
    /// Its outcome has been given (a timeout may come before the stream is closed).
    private(set) var isFinished = false

    init(request: HTTPRequest, target: NativeTarget, timeout: Duration, completion: @escaping Completion) {
        self.request = request
        self.target = target
        self.stream = H2Stream(body: request.body)
        self.completion = completion
        self.timeout = request.timeout ?? timeout
        self.deadline = .now + self.timeout
        if let notAfter = request.notAfter { deadline = min(deadline, notAfter) }
    }

    /// Its pacing slot came at `now`: its timeout counts from then (the client's own rate is
    /// not the server's time), still never past its `notAfter`.
    func slotCame(at now: ContinuousClock.Instant) {
        deadline = now + timeout
        if let notAfter = request.notAfter { deadline = min(deadline, notAfter) }
    }

    /// Readies it to be sent again on another stream, after the server refused it unprocessed.
    func restart() {
        stream = H2Stream(body: request.body)
        startedAt = nil
    }

    /// Gives its outcome, once; later calls do nothing.
    func complete(_ result: Result<HTTPResponse, HTTP2ClientError>) {
        guard !isFinished else { return }
        isFinished = true
        completion(result)
    }

    /// The answer its stream received, when the stream ended cleanly.
    func response() -> HTTPResponse {
        HTTPResponse(
            status: stream.status, headerLines: stream.headerLines, body: stream.responseBody, httpVersion: "HTTP/2",
            answerTime: startedAt.map { .now - $0 })
    }
}

/// Where a request goes: an `https` URL's host, port and path, as the native engine takes them.
struct NativeTarget: Hashable, Sendable {
    var host: String
    var port: Int
    var path: String

    /// `host:port` (`[v6]:port`), as messages and dead-connection reports name the server.
    var authority: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The request's `:authority`: the host alone on port 443, as libcurl sends it.
    var requestAuthority: String { port == 443 ? (host.contains(":") ? "[\(host)]" : host) : authority }

    /// Parses `https://host[:port]/path?query`; nil for anything else (another scheme, user info,
    /// no host).
    init?(url: String) {
        guard url.hasPrefix("https://") else { return nil }
        let rest = url.dropFirst("https://".count)
        let pathStart = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var hostPort = rest[..<pathStart]
        guard !hostPort.isEmpty, !hostPort.contains("@") else { return nil }
        var port = 443
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { return nil }
            let after = hostPort[hostPort.index(after: close)...]
            if after.hasPrefix(":") {
                guard let p = Int(after.dropFirst()), (1...65535).contains(p) else { return nil }
                port = p
            } else if !after.isEmpty {
                return nil
            }
            hostPort = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
        } else if let colon = hostPort.lastIndex(of: ":") {
            guard let p = Int(hostPort[hostPort.index(after: colon)...]), (1...65535).contains(p) else { return nil }
            port = p
            hostPort = hostPort[..<colon]
        }
        guard !hostPort.isEmpty else { return nil }
        self.host = String(hostPort).lowercased()
        self.port = port
        let path = rest[pathStart...].prefix { $0 != "#" }
        self.path = path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : String(path))
    }
}
