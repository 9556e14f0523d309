import Foundation
import JSON
import Synchronization

struct EmulatorRequest: Sendable {
    var method: String
    var path: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name }?.value
    }
}

struct EmulatorResponse: Sendable {
    var status: Int
    var headers: [(String, String)] = [("content-type", "application/json; charset=UTF-8")]
    var body: [UInt8]
    var delayMilliseconds = 0
    /// Send GOAWAY and close the connection after this answer, cutting any other in flight.
    var dropConnection = false
    /// Retire the connection after this answer (``EmulatorConnection/retire()``): GOAWAY, and
    /// a close once the requests on it are answered, as a server that retires a connection does.
    var drainConnection = false
    /// Answer with RST_STREAM REFUSED_STREAM instead: the request was not processed.
    var refuseStream = false

    static func json(_ status: Int, _ value: JSONValue) -> EmulatorResponse {
        EmulatorResponse(status: status, body: JSONWriter.write(value))
    }
}

/// A message the emulator accepted, as tests and the admin endpoint see it.
public struct RecordedMessage: Sendable {
    /// Seconds since the emulator started.
    public var time: Double
    public var project: String
    public var fid: String?
    public var token: String?
    public var topic: String?
    public var condition: String?
    /// The `message` object as received.
    public var message: JSONValue
    public var validateOnly: Bool
    /// The name it was given (`projects/p/messages/…`).
    public var name: String
    /// What a real device would ignore or mishandle in it, though FCM takes it (``DeviceNote``).
    public var deviceNotes: [DeviceNote] = []

    var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("time", .double(time)), ("project", .string(project)), ("message", message), ("validate_only", .bool(validateOnly)),
            ("name", .string(name)), ("device_notes", .array(deviceNotes.map(\.json))),
        ]
        if let fid { members.append(("fid", .string(fid))) }
        if let token { members.append(("token", .string(token))) }
        if let topic { members.append(("topic", .string(topic))) }
        if let condition { members.append(("condition", .string(condition))) }
        return .object(members)
    }
}

/// Every `messages:send` request and how it was answered (for ordering and retry checks).
public struct RecordedAttempt: Sendable {
    /// Seconds since the emulator started, when the request arrived.
    public var time: Double
    /// The device identifier (token or FID), for a message to one device.
    public var token: String?
    public var status: Int
    /// The FCM error code answered, if it failed.
    public var code: String?

    var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("time", .double(time)), ("status", .int(Int64(status)))]
        if let token { members.append(("token", .string(token))) }
        if let code { members.append(("code", .string(code))) }
        return .object(members)
    }
}

/// The emulator's behaviour, without I/O: requests in, answers out. Thread-safe.
final class EmulatorCore: Sendable {
    struct State {
        var faults: EmulatorFaults
        /// Access tokens issued: until when each holds, and the service account it was issued to.
        var accessTokens: [String: (expires: ContinuousClock.Instant, account: String)] = [:]
        var tokensIssued = 0
        var messages: [RecordedMessage] = []
        var attempts: [RecordedAttempt] = []
        var rejected: [String: Int] = [:]
        var sends = 0
        var random = SystemRandomNumberGenerator()
        /// Quota windows by key (`project`, `device:<id>`, `topic:<name>`): start and count.
        var quotaWindows: [String: (start: Double, count: Int)] = [:]
        /// The most requests seen open at once on one connection.
        var maxConcurrentStreams = 0
    }

    private let verifierBox: Mutex<JWTVerifier>
    var verifier: JWTVerifier { verifierBox.withLock { $0 } }
    let tokenLifetime: Duration
    let started = ContinuousClock.now
    /// `started` as seconds since the Unix epoch, to turn record times into wall-clock times.
    let startedEpochSeconds = Date().timeIntervalSince1970
    let state: Mutex<State>
    /// Accepted messages as JSON lines, if asked for.
    let recordFile: Mutex<FileHandle?>

    init(verifier: JWTVerifier, tokenLifetime: Duration, faults: EmulatorFaults, recordPath: String?) throws(EmulatorError) {
        self.verifierBox = Mutex(verifier)
        self.tokenLifetime = tokenLifetime
        self.state = Mutex(State(faults: faults))
        var file: FileHandle?
        if let recordPath {
            guard FileManager.default.createFile(atPath: recordPath, contents: nil), let handle = FileHandle(forWritingAtPath: recordPath) else {
                throw EmulatorError("cannot write the record file \(recordPath)")
            }
            file = handle
        }
        self.recordFile = Mutex(file)
    }

    var now: Double {
        let d = ContinuousClock.now - started
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    func handle(_ request: EmulatorRequest) -> EmulatorResponse {
        let path = request.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.path
        switch (request.method, path) {
        case ("POST", "/token"): return token(request)
        case ("POST", _) where path.hasPrefix("/v1/projects/") && path.hasSuffix("/messages:send"):
            let project = String(path.dropFirst("/v1/projects/".count).dropLast("/messages:send".count))
            return send(request, project: project)
        case ("GET", "/admin/messages"):
            return .json(200, .object([("messages", .array(state.withLock { $0.messages }.map(\.json)))]))
        case ("GET", "/admin/live-activities"):
            return .json(200, .object([("activities", LiveActivityBoard(state.withLock { $0.messages }).json)]))
        case ("GET", "/admin/attempts"):
            return .json(200, .object([("attempts", .array(state.withLock { $0.attempts }.map(\.json)))]))
        case ("GET", "/admin/stats"): return .json(200, stats)
        case ("POST", "/admin/faults"):
            do {
                let faults = try EmulatorFaults(json: request.body)
                state.withLock { $0.faults = faults }
                return .json(200, .object([("ok", .bool(true))]))
            } catch {
                return .json(400, .object([("error", .string(error.description))]))
            }
        case ("POST", "/admin/reset"):
            state.withLock {
                $0.messages = []
                $0.attempts = []
                $0.rejected = [:]
                $0.sends = 0
                $0.quotaWindows = [:]
                $0.faults = EmulatorFaults()
            }
            return .json(200, .object([("ok", .bool(true))]))
        case ("POST", "/admin/revoke-tokens"):
            state.withLock { $0.accessTokens = [:] }
            return .json(200, .object([("ok", .bool(true))]))
        case ("POST", "/admin/goaway"):
            var response = EmulatorResponse.json(200, .object([("ok", .bool(true))]))
            response.dropConnection = true
            return response
        default:
            return .json(
                404,
                .object([
                    (
                        "error",
                        .object([("code", .int(404)), ("message", .string("no route \(request.method) \(path)")), ("status", .string("NOT_FOUND"))])
                    )
                ]))
        }
    }

    var stats: JSONValue {
        state.withLock { s in
            .object([
                ("accepted", .int(Int64(s.messages.count))), ("requests", .int(Int64(s.sends))),
                ("tokens_issued", .int(Int64(s.tokensIssued))), ("max_concurrent_streams", .int(Int64(s.maxConcurrentStreams))),
                ("rejected", .object(s.rejected.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
            ])
        }
    }

    // MARK: OAuth2 token endpoint

    private func token(_ request: EmulatorRequest) -> EmulatorResponse {
        let form = Self.formFields(request.body)
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = form["assertion"] else {
            return .json(
                400,
                .object([
                    ("error", .string("unsupported_grant_type")),
                    ("error_description", .string("expected grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer and an assertion")),
                ]))
        }
        switch verifier.verify(assertion) {
        case .failure(let error):
            return .json(400, .object([("error", .string("invalid_grant")), ("error_description", .string(error.description))]))
        case .success(let account):
            let token = "emu-" + (0..<4).map { _ in String(UInt64.random(in: .min ... .max), radix: 36) }.joined()
            let expires = ContinuousClock.now + tokenLifetime
            state.withLock {
                $0.accessTokens[token] = (expires, account)
                $0.tokensIssued += 1
            }
            return .json(
                200,
                .object([
                    ("access_token", .string(token)), ("expires_in", .int(tokenLifetime.components.seconds)), ("token_type", .string("Bearer")),
                ]))
        }
    }

    static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (s: Substring) in s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s) }
            fields[decode(kv[0])] = kv.count > 1 ? decode(kv[1]) : ""
        }
        return fields
    }

    // MARK: messages:send

    private func send(_ request: EmulatorRequest, project: String) -> EmulatorResponse {
        let arrived = now
        var validator = MessageValidator()
        let accepted = validator.validate(body: request.body)
        let notes = accepted.map { DeviceNote.notes(for: $0.message) } ?? []
        let bearer = request.header("authorization").flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        var response = state.withLock { s -> EmulatorResponse in
            s.sends += 1
            if s.faults.refuseStreamEvery > 0, s.sends % s.faults.refuseStreamEvery == 0 {
                return EmulatorResponse(status: 0, body: [], refuseStream: true)  // not processed: nothing recorded
            }
            let failure: FCMErrorResponse? = {
                guard let bearer, let issued = s.accessTokens[bearer], issued.expires > .now else { return .unauthenticated }
                if let own = Self.project(ofAccount: issued.account), own != project { return .permissionDenied(project: project) }
                if var burst = s.faults.burst, burst.count > 0 {
                    burst.count -= 1
                    s.faults.burst = burst.count > 0 ? burst : nil
                    return .forStatus(burst.status, retryAfterSeconds: burst.retryAfterSeconds)
                }
                if let rate = s.faults.rate, Double.random(in: 0..<1, using: &s.random) < rate.probability {
                    return .forStatus(rate.status, retryAfterSeconds: rate.retryAfterSeconds)
                }
                guard let accepted else { return validator.tooBig ? .tooBig : .invalidArgument(validator.violations) }
                // A prefix names a dead device, or a dead Live Activity token (FCM's answer to one
                // is not documented: UNREGISTERED, as firebase-ios-sdk#15956 observes).
                for id in [accepted.device, accepted.message["apns"]?["live_activity_token"].flatMap(\.stringValue)].compactMap({ $0 }) {
                    if let code = s.faults.tokenPrefixes.filter({ id.hasPrefix($0.key) }).max(by: { $0.key.count < $1.key.count })?.value {
                        return .forCode(code)
                    }
                }
                return Self.quotaRefusal(accepted, project: project, faults: s.faults.quotas, windows: &s.quotaWindows, now: arrived)
            }()
            var response: EmulatorResponse
            if let failure {
                let code = failure.httpStatus == 429 ? "QUOTA_EXCEEDED" : failure.code
                s.rejected[code, default: 0] += 1
                s.attempts.append(RecordedAttempt(time: arrived, token: accepted?.device, status: failure.httpStatus, code: code))
                response = failure.response
            } else if let accepted {
                let name =
                    accepted.validateOnly
                    ? "projects/\(project)/messages/fake_message_id"
                    : "projects/\(project)/messages/0:\(Int64(Date().timeIntervalSince1970 * 1000))%\(String(s.sends, radix: 16))"
                let record = RecordedMessage(
                    time: arrived, project: project, fid: accepted.fid, token: accepted.token, topic: accepted.topic,
                    condition: accepted.condition, message: accepted.message, validateOnly: accepted.validateOnly, name: name,
                    deviceNotes: notes)
                s.messages.append(record)
                s.attempts.append(RecordedAttempt(time: arrived, token: accepted.device, status: 200))
                recordFile.withLock { file in
                    file?.write(Data(JSONWriter.write(record.json) + [0x0A]))
                }
                response = .json(200, .object([("name", .string(name))]))
            } else {
                response = .json(500, .null)  // unreachable: no failure means accepted
            }
            response.delayMilliseconds = s.faults.latencyMilliseconds
            if s.faults.dropConnectionEvery > 0, s.sends % s.faults.dropConnectionEvery == 0 { response.dropConnection = true }
            if s.faults.goAwayEvery > 0, s.sends % s.faults.goAwayEvery == 0 { response.drainConnection = true }
            return response
        }
        if response.body.isEmpty && !response.refuseStream { response.body = Array("{}".utf8) }
        return response
    }

    /// The project a service account belongs to: user-managed accounts are named
    /// `NAME@PROJECT_ID.iam.gserviceaccount.com` (Google Cloud's "Service accounts" overview);
    /// nil for another form, which the emulator then lets send for any project.
    static func project(ofAccount email: String) -> String? {
        let suffix = ".iam.gserviceaccount.com"
        guard let at = email.lastIndex(of: "@"), email.hasSuffix(suffix) else { return nil }
        let project = email[email.index(after: at)...].dropLast(suffix.count)
        return project.isEmpty ? nil : String(project)
    }

    /// FCM's message-rate quotas: each project's over all its messages, one device's, one
    /// topic's (a condition counts as one). A message over any limit is refused in its cause's
    /// shape; one within them all counts against each. Windows start at their first message, as
    /// FCM's minutes are "not aligned to the clock".
    static func quotaRefusal(
        _ accepted: MessageValidator.Accepted, project: String, faults: EmulatorFaults.Quotas,
        windows: inout [String: (start: Double, count: Int)], now: Double
    ) -> FCMErrorResponse? {
        var keys: [(key: String, limit: EmulatorFaults.Quotas.Limit, refusal: FCMErrorResponse)] = []
        if let limit = faults.project {
            keys.append(("project:\(project)", limit, .projectQuota(retryAfterSeconds: faults.retryAfterSeconds)))
        }
        if let limit = faults.device, let device = accepted.device {
            keys.append(("device:\(device)", limit, .targetQuota(device: true, opaque: faults.opaque, retryAfterSeconds: faults.retryAfterSeconds)))
        }
        if let limit = faults.topic, let topic = accepted.topic ?? accepted.condition {
            keys.append(("topic:\(topic)", limit, .targetQuota(device: false, opaque: faults.opaque, retryAfterSeconds: faults.retryAfterSeconds)))
        }
        func isOpen(_ window: (start: Double, count: Int)?, _ limit: EmulatorFaults.Quotas.Limit) -> Bool {
            guard let window else { return false }
            return now - window.start < Double(limit.window.components.seconds) + Double(limit.window.components.attoseconds) / 1e18
        }
        for (key, limit, refusal) in keys where isOpen(windows[key], limit) && windows[key]!.count >= limit.limit {
            return refusal
        }
        for (key, limit, _) in keys {
            if isOpen(windows[key], limit) {
                windows[key]?.count += 1
            } else {
                windows[key] = (now, 1)
            }
        }
        return nil
    }

    /// A connection has `open` requests begun and not yet answered (``EmulatorConnection``).
    func noteRequestsOpen(_ open: Int) {
        state.withLock { $0.maxConcurrentStreams = max($0.maxConcurrentStreams, open) }
    }

    /// The most requests answered at once on one connection.
    var maxConcurrentStreams: Int { state.withLock { $0.maxConcurrentStreams } }

    var messages: [RecordedMessage] { state.withLock { $0.messages } }
    var attempts: [RecordedAttempt] { state.withLock { $0.attempts } }
    var tokensIssued: Int { state.withLock { $0.tokensIssued } }

    func setVerifier(_ verifier: JWTVerifier) {
        verifierBox.withLock { $0 = verifier }
    }

    func setFaults(_ faults: EmulatorFaults) {
        state.withLock { $0.faults = faults }
    }

    func revokeTokens() {
        state.withLock { $0.accessTokens = [:] }
    }
}
