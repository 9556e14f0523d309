import JSON

/// Failures the emulator injects, set at start or at run time (`POST /admin/faults`).
///
/// As JSON (every member optional):
/// ```json
/// {"token_prefixes": {"dead-": "UNREGISTERED", "alien-": "SENDER_ID_MISMATCH", "bad-": "INVALID_ARGUMENT"},
///  "burst": {"status": 503, "count": 5, "retry_after": 1},
///  "rate": {"status": 500, "probability": 0.1},
///  "quotas": {"device": {"limit": 3, "window_ms": 1000}, "topic": {"limit": 10, "window_ms": 60000},
///             "project": {"limit": 1000, "window_ms": 60000}, "opaque": false, "retry_after": 1},
///  "latency_ms": 20,
///  "drop_connection_every": 1000,
///  "goaway_every": 500,
///  "refuse_stream_every": 50}
/// ```
public struct EmulatorFaults: Sendable, Equatable {
    /// Sends to a device identifier (token or FID) starting with the prefix fail with this FCM
    /// error code: `UNREGISTERED`, `SENDER_ID_MISMATCH`, `INVALID_ARGUMENT` (a malformed
    /// token), `THIRD_PARTY_AUTH_ERROR`, or `INTERNAL` / `UNAVAILABLE` (a message FCM keeps
    /// failing while it answers everyone else).
    public var tokenPrefixes: [String: String] = [:]
    /// The next `count` sends fail with `status` (503 UNAVAILABLE, 500 INTERNAL, 429 the
    /// project's quota), with `Retry-After: retryAfter` seconds if set.
    public var burst: Failure?
    /// Each send fails with `probability`.
    public var rate: Failure?
    /// FCM's three message-rate quotas, each a limit per window (FCM's windows are a minute,
    /// "not aligned to the clock"; tests shorten them). Over a limit, a send gets 429 in the
    /// shape of its cause (``FCMErrorResponse``).
    public var quotas = Quotas()
    /// Added to every answer.
    public var latencyMilliseconds = 0
    /// After every N-th send the connection is dropped (GOAWAY, then close at once: requests
    /// still in flight on it are cut). 0: never.
    public var dropConnectionEvery = 0
    /// After every N-th send the connection is retired gracefully, as a front end does with old
    /// connections: GOAWAY and a PING, the final GOAWAY a round trip later, then close once the
    /// requests on it are answered; a connection retires once, whichever of its sends ask
    /// (docs/emulator.md). 0: never.
    public var goAwayEvery = 0
    /// Every N-th send is refused with RST_STREAM REFUSED_STREAM, unprocessed. 0: never.
    public var refuseStreamEvery = 0

    public struct Quotas: Sendable, Equatable {
        /// Messages per window to one device (FCM: 240 a minute).
        public var device: Limit?
        /// Messages per window to one topic (or one condition).
        public var topic: Limit?
        /// Messages per window to the project (FCM: 600,000 a minute by default).
        public var project: Limit?
        /// Device and topic refusals carry no hint of their cause (see ``FCMErrorResponse``).
        public var opaque = false
        /// `Retry-After` on every quota refusal, if set.
        public var retryAfterSeconds: Int?

        public init() {}

        public struct Limit: Sendable, Equatable {
            public var limit: Int
            public var window: Duration

            public init(limit: Int, window: Duration) {
                self.limit = limit
                self.window = window
            }
        }
    }

    public struct Failure: Sendable, Equatable {
        public var status: Int
        public var count = 0
        public var probability = 0.0
        public var retryAfterSeconds: Int?

        public init(status: Int, count: Int = 0, probability: Double = 0, retryAfterSeconds: Int? = nil) {
            self.status = status
            self.count = count
            self.probability = probability
            self.retryAfterSeconds = retryAfterSeconds
        }
    }

    public init() {}

    /// The codes a token prefix may select.
    public static let tokenErrorCodes: Set<String> = [
        "UNREGISTERED", "SENDER_ID_MISMATCH", "INVALID_ARGUMENT", "THIRD_PARTY_AUTH_ERROR", "INTERNAL", "UNAVAILABLE",
    ]

    /// Parses the JSON form. - Throws: a message naming the bad member.
    public init(json: [UInt8]) throws(EmulatorError) {
        let value: JSONValue
        do { value = try JSONParser.parse(json) } catch { throw EmulatorError("faults: \(error)") }
        guard case .object(let members) = value else { throw EmulatorError("faults: expected a JSON object") }
        for (key, member) in members {
            switch key {
            case "token_prefixes":
                guard case .object(let prefixes) = member else { throw EmulatorError("faults.token_prefixes: expected an object") }
                for (prefix, code) in prefixes {
                    guard case .string(let code) = code, Self.tokenErrorCodes.contains(code) else {
                        throw EmulatorError(
                            "faults.token_prefixes.\(prefix): expected one of \(Self.tokenErrorCodes.sorted().joined(separator: ", "))")
                    }
                    tokenPrefixes[prefix] = code
                }
            case "burst": burst = try Self.failure(member, name: "burst")
            case "rate": rate = try Self.failure(member, name: "rate")
            case "latency_ms":
                guard case .int(let ms) = member, ms >= 0 else { throw EmulatorError("faults.latency_ms: expected a non-negative integer") }
                latencyMilliseconds = Int(ms)
            case "drop_connection_every":
                guard case .int(let n) = member, n >= 0 else { throw EmulatorError("faults.drop_connection_every: expected a non-negative integer") }
                dropConnectionEvery = Int(n)
            case "goaway_every":
                guard case .int(let n) = member, n >= 0 else { throw EmulatorError("faults.goaway_every: expected a non-negative integer") }
                goAwayEvery = Int(n)
            case "refuse_stream_every":
                guard case .int(let n) = member, n >= 0 else { throw EmulatorError("faults.refuse_stream_every: expected a non-negative integer") }
                refuseStreamEvery = Int(n)
            case "quotas": quotas = try Self.quotas(member)
            default:
                throw EmulatorError(
                    "faults: unknown member \"\(key)\" (token_prefixes, burst, rate, quotas, latency_ms, drop_connection_every, goaway_every, refuse_stream_every)"
                )
            }
        }
    }

    private static func quotas(_ value: JSONValue) throws(EmulatorError) -> Quotas {
        guard case .object(let members) = value else { throw EmulatorError("faults.quotas: expected an object") }
        var quotas = Quotas()
        for (key, member) in members {
            switch key {
            case "device", "topic", "project":
                guard case .int(let limit)? = member["limit"], limit >= 0, case .int(let ms)? = member["window_ms"], ms > 0 else {
                    throw EmulatorError("faults.quotas.\(key): expected {\"limit\": n, \"window_ms\": ms}")
                }
                let l = Quotas.Limit(limit: Int(limit), window: .milliseconds(ms))
                if key == "device" { quotas.device = l } else if key == "topic" { quotas.topic = l } else { quotas.project = l }
            case "opaque":
                guard case .bool(let b) = member else { throw EmulatorError("faults.quotas.opaque: expected true or false") }
                quotas.opaque = b
            case "retry_after":
                guard case .int(let seconds) = member, seconds >= 0 else { throw EmulatorError("faults.quotas.retry_after: expected seconds") }
                quotas.retryAfterSeconds = Int(seconds)
            default:
                throw EmulatorError("faults.quotas: unknown member \"\(key)\" (device, topic, project, opaque, retry_after)")
            }
        }
        return quotas
    }

    private static func failure(_ value: JSONValue, name: String) throws(EmulatorError) -> Failure {
        guard case .int(let status)? = value["status"], [429, 500, 503].contains(status) else {
            throw EmulatorError("faults.\(name).status: expected 429, 500 or 503")
        }
        var failure = Failure(status: Int(status))
        if case .int(let count)? = value["count"] { failure.count = Int(count) }
        switch value["probability"] {
        case .double(let p)?: failure.probability = p
        case .int(let p)?: failure.probability = Double(p)
        default: break
        }
        if case .int(let seconds)? = value["retry_after"] { failure.retryAfterSeconds = Int(seconds) }
        return failure
    }
}

public struct EmulatorError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
