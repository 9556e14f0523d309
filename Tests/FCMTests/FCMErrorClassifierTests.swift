import FCM
import Foundation
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

    @Test("each documented code maps to its action", arguments: [
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
        #expect(e.code == code)
        #expect(e.kind == kind)
        #expect(e.httpStatus == http)
        #expect(e.message == "msg for \(code)")
    }

    @Test("UNAUTHENTICATED without an FcmError detail means: refresh the access token")
    func unauthenticated() {
        let e = FCMErrorClassifier.classify(status: 401, body: Self.body(status: "UNAUTHENTICATED", httpCode: 401, errorCode: nil), retryAfter: nil)
        #expect(e.code == "UNAUTHENTICATED")
        #expect(e.kind == .auth)
        #expect(e.isRetryable)
    }

    @Test("INVALID_ARGUMENT about the registration token invalidates the token; about the payload it does not")
    func invalidArgumentByField() {
        let token = FCMErrorClassifier.classify(
            status: 400,
            body: Self.body(status: "INVALID_ARGUMENT", httpCode: 400, errorCode: "INVALID_ARGUMENT",
                            violations: [("message.token", "Invalid registration token")]),
            retryAfter: nil)
        #expect(token.kind == .tokenDead && token.invalidatesToken)
        #expect(token.fieldViolations == [.init(field: "message.token", description: "Invalid registration token")])

        let payload = FCMErrorClassifier.classify(
            status: 400,
            body: Self.body(status: "INVALID_ARGUMENT", httpCode: 400, errorCode: "INVALID_ARGUMENT",
                            violations: [("message.android.ttl", "Invalid duration")]),
            retryAfter: nil)
        #expect(payload.kind == .permanent && !payload.invalidatesToken)
        #expect(payload.description.contains("message.android.ttl: Invalid duration"))
    }

    @Test("a non-JSON body falls back to the HTTP status")
    func nonJSON() {
        let e = FCMErrorClassifier.classify(status: 503, body: Array("<html>upstream down</html>".utf8), retryAfter: "7")
        #expect(e.code == "UNAVAILABLE" && e.kind == .retryable)
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
    let unavailable = FCMError(code: "UNAVAILABLE", kind: .retryable, httpStatus: 503, message: "")

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

    @Test("quota errors pause at least quotaPause")
    func quota() {
        let q = FCMError(code: "QUOTA_EXCEEDED", kind: .quota, httpStatus: 429, message: "")
        #expect(RetryPolicy().delay(afterAttempt: 1, elapsed: .zero, error: q, random: 0.1) == .seconds(60))
    }

    @Test("gives up after maxAttempts, past the budget, or on permanent errors")
    func givingUp() {
        let p = RetryPolicy()
        #expect(p.delay(afterAttempt: 8, elapsed: .zero, error: unavailable, random: 1) == nil)
        #expect(p.delay(afterAttempt: 1, elapsed: .seconds(299.9), error: unavailable, random: 1) == nil)
        let permanent = FCMError(code: "INVALID_ARGUMENT", kind: .permanent, httpStatus: 400, message: "")
        #expect(p.delay(afterAttempt: 1, elapsed: .zero, error: permanent, random: 0) == nil)
        let dead = FCMError(code: "UNREGISTERED", kind: .tokenDead, httpStatus: 404, message: "")
        #expect(p.delay(afterAttempt: 1, elapsed: .zero, error: dead, random: 0) == nil)
    }
}
