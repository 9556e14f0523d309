import JSON

/// Failures the emulator injects, set at start or at run time (`POST /admin/faults`).
///
/// As JSON (every member optional):
/// ```json
/// {"token_prefixes": {"dead-": "UNREGISTERED", "alien-": "SENDER_ID_MISMATCH", "bad-": "INVALID_ARGUMENT"},
///  "burst": {"status": 503, "count": 5, "retry_after": 1},
///  "rate": {"status": 500, "probability": 0.1},
///  "latency_ms": 20,
///  "drop_connection_every": 1000}
/// ```
public struct EmulatorFaults: Sendable, Equatable {
    /// Sends to a token starting with the prefix fail with this FCM error code:
    /// `UNREGISTERED`, `SENDER_ID_MISMATCH`, `INVALID_ARGUMENT` (a malformed token) or
    /// `THIRD_PARTY_AUTH_ERROR`.
    public var tokenPrefixes: [String: String] = [:]
    /// The next `count` sends fail with `status` (503 UNAVAILABLE, 500 INTERNAL, 429
    /// QUOTA_EXCEEDED), with `Retry-After: retryAfter` seconds if set.
    public var burst: Failure?
    /// Each send fails with `probability`.
    public var rate: Failure?
    /// Added to every answer.
    public var latencyMilliseconds = 0
    /// After every N-th send the connection is dropped (GOAWAY, then close). 0: never.
    public var dropConnectionEvery = 0

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
    public static let tokenErrorCodes: Set<String> = ["UNREGISTERED", "SENDER_ID_MISMATCH", "INVALID_ARGUMENT", "THIRD_PARTY_AUTH_ERROR"]

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
                        throw EmulatorError("faults.token_prefixes.\(prefix): expected one of \(Self.tokenErrorCodes.sorted().joined(separator: ", "))")
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
            default:
                throw EmulatorError("faults: unknown member \"\(key)\" (token_prefixes, burst, rate, latency_ms, drop_connection_every)")
            }
        }
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
