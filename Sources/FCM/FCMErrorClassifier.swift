import Foundation
import JSON

/// Turns an FCM HTTP v1 error response into an ``FCMError`` (architecture.md's error table),
/// from what FCM really sends (docs/emulator.md lists the bodies and their sources):
///
/// - a dead **registration token** is HTTP 400 INVALID_ARGUMENT with only an `FcmError` detail
///   and a message about the token (the error-codes guide, Example 2), while a bad **payload**
///   names its field in a `google.rpc.BadRequest` detail (Example 1), or names no field at all
///   ("Request contains an invalid argument." for a message that is too big);
/// - the **project's** quota is HTTP 429 RESOURCE_EXHAUSTED with a `google.rpc.ErrorInfo` whose
///   `metadata.quota_limit` is e.g. `SendsPerMinutePerProject`, and no `FcmError` at all
///   (firebase-admin-go#719); a **device's** or a **topic's** quota is QUOTA_EXCEEDED with a
///   `google.rpc.QuotaFailure` ("Topic quota exceeded.", ntfy#289). Wording is only a hint:
///   what the answer does not say is left ``FCMError/QuotaScope/undetermined`` for the client.
public enum FCMErrorClassifier {
    /// - Parameters:
    ///   - status: the HTTP status (≥ 400).
    ///   - body: the response body; FCM's JSON error shape, or anything else.
    ///   - retryAfter: the `Retry-After` header value, if any.
    ///   - now: for HTTP-date `Retry-After` values.
    public static func classify(status: Int, body: [UInt8], retryAfter: String?, now: Date = Date()) -> FCMError {
        let parsed = ErrorBody.parse(body)
        var code = (parsed?.fcmErrorCode ?? parsed?.status).map(FCMError.Code.init(fcm:)) ?? .forHTTPStatus(status)
        // The project quota's answer carries no FcmError; its status is RESOURCE_EXHAUSTED.
        if status == 429 || code == .resourceExhausted { code = .quotaExceeded }
        let message = parsed?.message ?? String(decoding: body.prefix(300), as: UTF8.self)
        let violations = parsed?.fieldViolations ?? []
        let kind = kind(code: code, httpStatus: status, violations: violations, message: message)
        return FCMError(
            code: code, kind: kind, httpStatus: status, message: message, fieldViolations: violations,
            retryAfter: retryAfter.flatMap { RetryAfter.parse($0, now: now) },
            quotaScope: kind == .quota ? quotaScope(parsed, message: message) : nil)
    }

    static func kind(code: FCMError.Code, httpStatus: Int, violations: [FCMError.FieldViolation], message: String) -> FCMError.Kind {
        switch code {
        case .unavailable, .internal: return .retryable
        case .quotaExceeded: return .quota
        case .unregistered, .senderIDMismatch: return .tokenDead
        case .unauthenticated: return .auth
        case .thirdPartyAuthError: return .permanent
        // Google's IAM refusal, with no FcmError (SENDER_ID_MISMATCH has one): the service
        // account may not send for this project (another project's account, a wrong project ID,
        // the FCM API disabled). No message can succeed until the operator fixes that.
        case .permissionDenied: return .configuration
        case .invalidArgument: return isAboutTheTarget(violations: violations, message: message) ? .tokenDead : .permanent
        default:
            switch httpStatus {
            case 401: return .auth
            case 500...599: return .retryable
            default: return .permanent
            }
        }
    }

    /// INVALID_ARGUMENT about the device identifier rather than the payload. A field violation
    /// decides when there is one (`message.token`, `message.fid`: older answers name the
    /// token's field); FCM's current answer has none, only its message ("The registration token
    /// is not a valid FCM registration token"). A payload error without a field (a message
    /// that is too big) says nothing about a token, so it stays a payload error.
    static func isAboutTheTarget(violations: [FCMError.FieldViolation], message: String) -> Bool {
        if !violations.isEmpty {
            return violations.contains { v in ["token", "fid"].contains { v.field == "message.\($0)" || v.field.hasSuffix(".\($0)") } }
        }
        let text = message.lowercased()
        let words = text.split { !$0.isLetter }
        return text.contains("registration token") || text.contains("installation") || words.contains("fid")
    }

    /// Whose quota an answer says ran out: structured details first (`ErrorInfo.metadata`,
    /// `QuotaFailure.violations`), then the message's words.
    static func quotaScope(_ body: ErrorBody?, message: String) -> FCMError.QuotaScope {
        for hint in (body?.quotaHints ?? []) + [message] {
            let text = hint.lowercased()
            if text.contains("device") || text.contains("registration") || text.contains("installation") { return .device }
            if text.contains("topic") || text.contains("condition") { return .topic }
        }
        for hint in (body?.quotaHints ?? []) + [message] {
            let text = hint.lowercased()
            if text.contains("project") || text.contains("consumer") { return .project }
        }
        return .undetermined
    }

    /// FCM's error JSON: `{"error": {"code", "message", "status", "details": [...]}}`.
    struct ErrorBody {
        var message: String?
        var status: String?
        var fcmErrorCode: String?
        var fieldViolations: [FCMError.FieldViolation] = []
        /// What `ErrorInfo` and `QuotaFailure` details say about a quota: `quota_limit`,
        /// `quota_metric`, `quota_id`, violation subjects and descriptions, dimension names.
        var quotaHints: [String] = []

        static func parse(_ body: [UInt8]) -> ErrorBody? {
            guard let root = try? JSONParser.parse(body), let error = root["error"], case .object = error else { return nil }
            var result = ErrorBody(message: error["message"]?.stringValue, status: error["status"]?.stringValue)
            guard case .array(let details)? = error["details"] else { return result }
            for detail in details {
                let type = detail["@type"]?.stringValue ?? ""
                if type.hasSuffix("google.firebase.fcm.v1.FcmError"), let code = detail["errorCode"]?.stringValue {
                    result.fcmErrorCode = code
                } else if type.hasSuffix("google.rpc.BadRequest"), case .array(let violations)? = detail["fieldViolations"] {
                    for v in violations {
                        result.fieldViolations.append(.init(field: v["field"]?.stringValue ?? "", description: v["description"]?.stringValue ?? ""))
                    }
                } else if type.hasSuffix("google.rpc.ErrorInfo") {
                    for key in ["quota_limit", "quota_metric", "quota_unit"] {
                        if let value = detail["metadata"]?[key]?.stringValue { result.quotaHints.append(value) }
                    }
                } else if type.hasSuffix("google.rpc.QuotaFailure"), case .array(let violations)? = detail["violations"] {
                    for v in violations {
                        // Dimension names first: `device_token` says more than a `project:` subject.
                        if case .object(let dimensions)? = v["quota_dimensions"] ?? v["quotaDimensions"] {
                            result.quotaHints += dimensions.map(\.key)
                        }
                        for key in ["quota_id", "quotaId", "quota_metric", "quotaMetric", "description", "subject"] {
                            if let value = v[key]?.stringValue { result.quotaHints.append(value) }
                        }
                    }
                }
            }
            return result
        }
    }
}
