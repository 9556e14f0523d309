import FCM
import Foundation
import HTTP2
import Testing

@Suite("FCM error classification (architecture.md's table)")
struct FCMErrorClassifierTests {
    /// FCM's documented error body shape.
    static func body(status: String, httpCode: Int, errorCode: String?, violations: [(String, String)] = []) -> [UInt8] {
        var details: [[String: Any]] = []
        if let errorCode {
            details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": errorCode])
        }
        if !violations.isEmpty {
            details.append([
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": violations.map { ["field": $0.0, "description": $0.1] },
            ])
        }
        let object: [String: Any] = ["error": ["code": httpCode, "message": "msg for \(errorCode ?? status)", "status": status, "details": details]]
        return Array(try! JSONSerialization.data(withJSONObject: object))
    }

    @Test(
        "each documented code maps to its action",
        arguments: [
            ("INVALID_ARGUMENT", 400, "INVALID_ARGUMENT", FCMError.Kind.permanent),
            ("NOT_FOUND", 404, "UNREGISTERED", .tokenDead),
            ("PERMISSION_DENIED", 403, "SENDER_ID_MISMATCH", .tokenDead),
            ("RESOURCE_EXHAUSTED", 429, "QUOTA_EXCEEDED", .quota),
            ("UNAVAILABLE", 503, "UNAVAILABLE", .retryable),
            ("INTERNAL", 500, "INTERNAL", .retryable),
            ("UNAUTHENTICATED", 401, "THIRD_PARTY_AUTH_ERROR", .permanent),
        ])
    func table(status: String, http: Int, code: String, kind: FCMError.Kind) {
        let e = FCMErrorClassifier.classify(status: http, body: Self.body(status: status, httpCode: http, errorCode: code), retryAfter: nil)
        #expect(e.code == FCMError.Code(fcm: code))
        #expect(e.kind == kind)
        #expect(e.httpStatus == http)
        #expect(e.message == "msg for \(code)")
    }

    @Test("UNAUTHENTICATED without an FcmError detail means: refresh the access token")
    func unauthenticated() {
        let e = FCMErrorClassifier.classify(status: 401, body: Self.body(status: "UNAUTHENTICATED", httpCode: 401, errorCode: nil), retryAfter: nil)
        #expect(e.code == .unauthenticated)
        #expect(e.kind == .auth)
        #expect(e.isRetryable)
    }

    /// FCM's answers as its documentation and its users show them, byte for byte where a source
    /// quotes the body (docs/emulator.md lists the same sources).
    enum Real {
        /// The error-codes guide (firebase.google.com/docs/cloud-messaging/error-codes), Example 2:
        /// an invalid registration token. No google.rpc.BadRequest.
        static let invalidToken =
            #"{"error":{"code":400,"message":"The registration token is not a valid FCM registration token","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"}]}}"#
        /// The same guide, Example 1: an invalid value in a data message.
        static let invalidData =
            #"{"error":{"code":400,"message":"Invalid value at 'message.data[0].value' (TYPE_STRING), 12","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.data[0].value","description":"Invalid value at 'message.data[0].value' (TYPE_STRING), 12"}]}]}}"#
        /// An older invalid-token answer (pushiko's "FCM responses"): the BadRequest names the token.
        static let invalidTokenWithField =
            #"{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"},{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.token","description":"Invalid registration token"}]}]}}"#
        /// A payload over the size limit (pushiko): no field, no details.
        static let tooBig = #"{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}"#
        /// The project's quota, as firebase-admin-go#719 quotes it: no FcmError detail at all.
        static let projectQuota =
            #"{"error":{"code":429,"message":"Quota exceeded for quota metric 'Send requests' and limit 'Send requests per minute' of service 'fcm.googleapis.com' for consumer 'project_number:xxx'.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com","metadata":{"quota_limit_value":"xxx","consumer":"projects/xxx","quota_metric":"fcm.googleapis.com/send_requests","quota_unit":"1/min/{project}","service":"fcm.googleapis.com","quota_location":"global","quota_limit":"SendsPerMinutePerProject"}},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Request a higher quota limit.","url":"https://cloud.google.com/docs/quotas/help/request_increase"}]}]}}"#
        /// A topic's quota: the message ntfy#289 reports ("Topic quota exceeded.").
        static let topicQuota =
            #"{"error":{"code":429,"message":"Topic quota exceeded.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"QUOTA_EXCEEDED"}]}}"#
        /// A device's quota with the QuotaFailure the ErrorCode reference promises, shaped as
        /// firebase-admin-go#739's fixture (subject is the project; the dimension names the device).
        static let deviceQuotaFailure =
            #"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"QUOTA_EXCEEDED"},{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"project:test-project","quota_id":"DeviceMessagesPerMinute","quota_dimensions":{"device_token":"abc123"}}]}]}}"#
        /// A quota answer that says nothing of whose quota it is.
        static let opaqueQuota =
            #"{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"QUOTA_EXCEEDED"}]}}"#
    }

    static func classify(_ status: Int, _ body: String) -> FCMError {
        FCMErrorClassifier.classify(status: status, body: Array(body.utf8), retryAfter: nil)
    }

    @Test("FCM's invalid-token answer (no field violation) invalidates the token; a payload error, named or not, does not")
    func invalidArgument() {
        let token = Self.classify(400, Real.invalidToken)
        #expect(token.code == .invalidArgument && token.kind == .tokenDead && token.invalidatesToken)
        #expect(token.fieldViolations.isEmpty)
        #expect(Self.classify(400, Real.invalidTokenWithField).kind == .tokenDead)

        let payload = Self.classify(400, Real.invalidData)
        #expect(payload.kind == .permanent && !payload.invalidatesToken)
        #expect(payload.fieldViolations.map(\.field) == ["message.data[0].value"])
        #expect(payload.description.contains("message.data[0].value"))
        #expect(Self.classify(400, Real.tooBig).kind == .permanent)
        #expect(Self.classify(400, #"{"error":{"code":400,"message":"Android message is too big","status":"INVALID_ARGUMENT"}}"#).kind == .permanent)
    }

    @Test(
        "the three QUOTA_EXCEEDED causes are told apart by the answer's details, then its words",
        arguments: [
            (Real.projectQuota, FCMError.QuotaScope.project),
            (Real.topicQuota, .topic),
            (Real.deviceQuotaFailure, .device),
            (#"{"error":{"code":429,"message":"Device message rate exceeded.","status":"RESOURCE_EXHAUSTED"}}"#, .device),
            (Real.opaqueQuota, .undetermined),
            ("<html>429 Too Many Requests</html>", .undetermined),
        ])
    func quotaScopes(body: String, scope: FCMError.QuotaScope) {
        let e = Self.classify(429, body)
        #expect(e.code == .quotaExceeded && e.kind == .quota && e.isRetryable, "\(body)")
        #expect(e.quotaScope == scope, "\(body)")
    }

    @Test("a non-JSON body falls back to the HTTP status")
    func nonJSON() {
        let e = FCMErrorClassifier.classify(status: 503, body: Array("<html>upstream down</html>".utf8), retryAfter: "7")
        #expect(e.code == .unavailable && e.kind == .retryable)
        #expect(e.message.contains("upstream down"))
        #expect(e.retryAfter == .seconds(7))
        #expect(FCMErrorClassifier.classify(status: 418, body: [], retryAfter: nil).kind == .permanent)
    }
}

@Suite("Retry-After")
struct RetryAfterTests {
    @Test("delay-seconds")
    func seconds() {
        #expect(RetryAfter.parse("120") == .seconds(120))
        #expect(RetryAfter.parse(" 0 ") == .zero)
        #expect(RetryAfter.parse("-1") == nil)
        #expect(RetryAfter.parse("soon") == nil)
    }

    @Test("HTTP-date forms, relative to now; past dates give zero")
    func dates() {
        let now = Date(timeIntervalSince1970: 1_445_412_450)  // Wed, 21 Oct 2015 07:27:30 GMT
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.parse("Wednesday, 21-Oct-15 07:28:00 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.parse("Wed Oct 21 07:28:00 2015", now: now) == .seconds(30))
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:00:00 GMT", now: now) == .zero)
    }
}

@Suite("RetryPolicy")
struct RetryPolicyTests {
    let unavailable = FCMError(code: .unavailable, kind: .retryable, httpStatus: 503, message: "")

    @Test("full jitter under an exponential ceiling, capped at maxBackoff")
    func backoff() {
        let p = RetryPolicy()
        #expect(p.delay(afterAttempt: 1, elapsed: .zero, error: unavailable, random: 1) == .milliseconds(200))
        #expect(p.delay(afterAttempt: 3, elapsed: .zero, error: unavailable, random: 1) == .milliseconds(800))
        #expect(p.delay(afterAttempt: 3, elapsed: .zero, error: unavailable, random: 0.5) == .milliseconds(400))
        #expect(p.delay(afterAttempt: 3, elapsed: .zero, error: unavailable, random: 0) == .zero)
        #expect(p.delay(afterAttempt: 7, elapsed: .zero, error: unavailable, random: 1) == .milliseconds(12_800))
        var big = RetryPolicy()
        big.maxAttempts = 100
        #expect(big.delay(afterAttempt: 60, elapsed: .zero, error: unavailable, random: 1) == .seconds(30))
    }

    @Test("Retry-After is a floor, whatever the jitter says")
    func retryAfterFloor() {
        var e = unavailable
        e.retryAfter = .seconds(5)
        #expect(RetryPolicy().delay(afterAttempt: 1, elapsed: .zero, error: e, random: 0) == .seconds(5))
    }

    @Test("the project's and a topic's quota wait at least quotaPause; a device's backs off like any retry")
    func quota() {
        for scope in [FCMError.QuotaScope.project, .topic, .undetermined] {
            let q = FCMError(code: .quotaExceeded, kind: .quota, httpStatus: 429, message: "", quotaScope: scope)
            #expect(RetryPolicy().delay(afterAttempt: 1, elapsed: .zero, error: q, random: 0.1) == .seconds(60), "\(scope)")
        }
        var device = FCMError(code: .quotaExceeded, kind: .quota, httpStatus: 429, message: "", quotaScope: .device)
        #expect(RetryPolicy().delay(afterAttempt: 3, elapsed: .zero, error: device, random: 1) == .milliseconds(800))
        device.retryAfter = .seconds(2)
        #expect(RetryPolicy().delay(afterAttempt: 3, elapsed: .zero, error: device, random: 1) == .seconds(2))
    }

    @Test("transient failures are retried until the budget, however many attempts that takes; maxAttempts caps only when set")
    func givingUp() {
        let p = RetryPolicy()
        #expect(p.maxAttempts == nil)
        #expect(p.delay(afterAttempt: 8, elapsed: .zero, error: unavailable, random: 1) == .milliseconds(25_600))
        #expect(p.delay(afterAttempt: 500, elapsed: .seconds(200), error: unavailable, random: 1) == .seconds(30))
        #expect(p.delay(afterAttempt: 1, elapsed: .seconds(299.9), error: unavailable, random: 1) == nil)
        var capped = RetryPolicy()
        capped.maxAttempts = 8
        #expect(capped.delay(afterAttempt: 8, elapsed: .zero, error: unavailable, random: 1) == nil)
        let permanent = FCMError(code: .invalidArgument, kind: .permanent, httpStatus: 400, message: "")
        #expect(p.delay(afterAttempt: 1, elapsed: .zero, error: permanent, random: 0) == nil)
        let dead = FCMError(code: .unregistered, kind: .tokenDead, httpStatus: 404, message: "")
        #expect(p.delay(afterAttempt: 1, elapsed: .zero, error: dead, random: 0) == nil)
    }

    @Test("no answer is never the message's fault: transport failures retry, an untrusted certificate or a bad URL is configuration")
    func transport() {
        for code in [HTTP2ClientError.Code.other, .connectionClosed, .couldNotConnect, .timeout] {
            #expect(FCMError(transport: HTTP2ClientError(code: code, message: "", isRetryable: false)).kind == .retryable, "\(code)")
        }
        #expect(FCMError(transport: HTTP2ClientError(code: .tls, message: "", isRetryable: false)).kind == .configuration)
        #expect(FCMError(transport: HTTP2ClientError(code: .invalidRequest, message: "", isRetryable: false)).kind == .configuration)
        #expect(FCMError(transport: HTTP2ClientError(code: .shutdown, message: "", isRetryable: false)).isShutdown)
    }
}

@Suite("FCMAvailability: waiting on FCM, without I/O")
struct FCMAvailabilityTests {
    let t0 = ContinuousClock.now

    @Test("an outage starts at the first transient failure with nothing answered since, and ends at the first answer")
    func outage() {
        var a = FCMAvailability()
        a.answered(at: t0, success: true)
        #expect(a.waiting(at: t0 + .seconds(1)) == nil)
        a.failedTransiently(since: t0 + .seconds(2), reason: "FCM UNAVAILABLE (HTTP 503)")
        a.failedTransiently(since: t0 + .seconds(3), reason: "FCM UNAVAILABLE (HTTP 503)")
        #expect(a.waiting(at: t0 + .seconds(10)) == .seconds(8))
        #expect(a.lastFailure == "FCM UNAVAILABLE (HTTP 503)")
        a.answered(at: t0 + .seconds(12), success: false)  // a dead token is an answer too
        #expect(a.waiting(at: t0 + .seconds(13)) == nil)
        #expect(a.waited(upTo: t0 + .seconds(20)) == .seconds(10))
    }

    @Test("a wait begins when the failed attempt was sent (a timeout waited all along); a failure sent before FCM's last answer starts none")
    func waitBegins() {
        var a = FCMAvailability()
        a.answered(at: t0 + .seconds(10), success: true)
        a.failedTransiently(since: t0 + .seconds(12), reason: "FCM TIMEOUT")  // sent at 12, timed out at 42
        #expect(a.waiting(at: t0 + .seconds(42)) == .seconds(30))
        var b = FCMAvailability()
        b.answered(at: t0 + .seconds(10), success: true)
        b.failedTransiently(since: t0 + .seconds(5), reason: "FCM UNAVAILABLE")  // sent before that answer came
        #expect(b.waiting(at: t0 + .seconds(11)) == nil)
        #expect(b.lastFailure == "FCM UNAVAILABLE")
    }

    @Test("waited time adds up over outages, so a send's budget can leave them out")
    func waitedAddsUp() {
        var a = FCMAvailability()
        a.failedTransiently(since: t0, reason: "x")
        a.answered(at: t0 + .seconds(5), success: true)
        a.failedTransiently(since: t0 + .seconds(7), reason: "y")
        #expect(a.waited(upTo: t0 + .seconds(9)) == .seconds(7))
        // A send that started at t0 + 6 s and is still failing at t0 + 9 s used 1 s of budget.
        let usedByLateSend = (t0 + .seconds(9) - (t0 + .seconds(6))) - (a.waited(upTo: t0 + .seconds(9)) - a.waited(upTo: t0 + .seconds(6)))
        #expect(usedByLateSend == .seconds(1))
    }

    @Test("a quota refusal that says nothing is the target's own while others get through since another target was refused")
    func whoseQuota() {
        let chatty = MessageTarget(.token, "chatty")
        let other = MessageTarget(.token, "other")
        let third = MessageTarget(.fid, "third")
        var a = FCMAvailability()
        let t0 = self.t0
        func own(_ target: MessageTarget, atSecond s: Int) -> Bool { a.refusedOwnQuota(target, at: t0 + .seconds(s)) }
        #expect(!own(chatty, atSecond: 0), "nothing got through yet: in doubt, the project's")
        a.answered(at: t0 + .seconds(1), success: true)
        #expect(own(chatty, atSecond: 2), "others got through since")
        #expect(own(chatty, atSecond: 3), "its own refusals do not count against it")
        #expect(!own(other, atSecond: 4), "another target refused since the last success: the project's")
        #expect(!own(third, atSecond: 5))
        a.answered(at: t0 + .seconds(6), success: true)
        #expect(own(other, atSecond: 60), "however long ago, a success since the last other refusal")
    }
}
