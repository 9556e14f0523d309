/// HTTP header fields in order, duplicates kept; names compare case-insensitively.
public struct HTTPHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { ($0.0, $0.1) }
    }

    public mutating func add(name: String, value: String) { fields.append((name, value)) }

    /// The first value for `name` (case-insensitive).
    public subscript(name: String) -> String? {
        let lower = name.lowercased()
        return fields.first { $0.name.lowercased() == lower }?.value
    }

    /// Every value for `name` (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        let lower = name.lowercased()
        return fields.filter { $0.name.lowercased() == lower }.map(\.value)
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.elementsEqual(b.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// A request for ``HTTP2Client/send(_:)``.
public struct HTTPRequest: Sendable {
    public var method: String
    /// An absolute `https://` URL.
    public var url: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Overrides the client's ``HTTP2Client/Configuration/requestTimeout`` for this request. It
    /// counts from when the request may go: its hand-over, or for a paced one its slot (the
    /// client's own rate is not the server's time); waits for a stream count.
    public var timeout: Duration?
    /// Never on the wire at or after this instant: a request still waiting then (for its pacing
    /// slot, a stream, a connection) fails with ``HTTP2ClientError/Code/timeout`` unsent, and
    /// one sent times out at it at the latest. A capped push's send limit (`FCMClient.send(…,
    /// deadline:)`): one sent later would escape its cap. nil: none.
    public var notAfter: ContinuousClock.Instant?
    /// Held to the client's rate (``HTTP2Client/setRate(_:)``), if it has one: waits, in order
    /// with the other paced requests, until its turn comes. Default false.
    public var paced: Bool

    /// `host:port` of ``url`` (`host` alone if it names no port), for messages and logs.
    public var authority: String {
        let afterScheme = url.range(of: "://").map { url[$0.upperBound...] } ?? url[...]
        let end = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        let hostPart = afterScheme[..<end]
        return String(hostPart.split(separator: "@", maxSplits: 1).last ?? hostPart)
    }

    public init(
        method: String = "POST", url: String, headers: HTTPHeaders = [:], body: [UInt8] = [], timeout: Duration? = nil,
        notAfter: ContinuousClock.Instant? = nil, paced: Bool = false
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.notAfter = notAfter
        self.paced = paced
    }
}

/// A complete response: any status (4xx and 5xx included), headers and body.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Parsed when first read: most callers (an FCM send answered 200) never look at them, and
    /// parsing makes a string per name and value, on every response (issue 59).
    public var headers: HTTPHeaders {
        get {
            switch headerFields {
            case .parsed(let headers): headers
            case .lines(let bytes): Self.parse(headerLines: bytes)
            }
        }
        set { headerFields = .parsed(newValue) }
    }
    private var headerFields: HeaderFields
    public var body: [UInt8]
    /// The negotiated protocol, e.g. "HTTP/2".
    public var httpVersion: String
    /// From the request going out to the answer being in: the server's and the network's time,
    /// without the time the request waited for a stream or a connection.
    public var answerTime: Duration?

    public init(status: Int, headers: HTTPHeaders, body: [UInt8], httpVersion: String, answerTime: Duration? = nil) {
        self.init(status: status, headerFields: .parsed(headers), body: body, httpVersion: httpVersion, answerTime: answerTime)
    }

    /// A response whose headers are still the lines the server sent (`name: value` CRLF, the
    /// status line left out), parsed only if ``headers`` is read.
    init(status: Int, headerLines: [UInt8], body: [UInt8], httpVersion: String, answerTime: Duration?) {
        self.init(status: status, headerFields: .lines(headerLines), body: body, httpVersion: httpVersion, answerTime: answerTime)
    }

    private init(status: Int, headerFields: HeaderFields, body: [UInt8], httpVersion: String, answerTime: Duration?) {
        self.status = status
        self.headerFields = headerFields
        self.body = body
        self.httpVersion = httpVersion
        self.answerTime = answerTime
    }

    private enum HeaderFields: Sendable {
        case parsed(HTTPHeaders)
        case lines([UInt8])
    }

    /// Header lines (`name: value` CRLF) as fields, values trimmed of blanks.
    static func parse(headerLines: [UInt8]) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for line in headerLines.split(separator: 0x0A) {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[..<colon], as: UTF8.self)
            var value = line[(colon + 1)...]
            while let first = value.first, first == 0x20 || first == 0x09 { value.removeFirst() }
            while let last = value.last, last == 0x0D || last == 0x20 || last == 0x09 { value.removeLast() }
            headers.add(name: name, value: String(decoding: value, as: UTF8.self))
        }
        return headers
    }

    /// The body as UTF-8 text (lossy).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
