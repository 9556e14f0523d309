import Foundation

/// Turns an FCM HTTP v1 error response into an ``FCMError`` (architecture.md's error table).
public enum FCMErrorClassifier {
    /// - Parameters:
    ///   - status: the HTTP status (≥ 400).
    ///   - body: the response body; FCM's JSON error shape, or anything else.
    ///   - retryAfter: the `Retry-After` header value, if any.
    ///   - now: for HTTP-date `Retry-After` values.
    public static func classify(status: Int, body: [UInt8], retryAfter: String?, now: Date = Date()) -> FCMError {
        let parsed = ErrorBody.parse(body)
        let fcmCode = parsed?.fcmErrorCode
        let status_ = parsed?.status
        let code = fcmCode ?? status_ ?? fallbackCode(httpStatus: status)
        let message = parsed?.message ?? String(decoding: body.prefix(300), as: UTF8.self)
        let violations = parsed?.fieldViolations ?? []
        return FCMError(
            code: code,
            kind: kind(code: code, httpStatus: status, violations: violations),
            httpStatus: status,
            message: message,
            fieldViolations: violations,
            retryAfter: retryAfter.flatMap { RetryAfter.parse($0, now: now) }
        )
    }

    static func kind(code: String, httpStatus: Int, violations: [FCMError.FieldViolation]) -> FCMError.Kind {
        switch code {
        case "UNAVAILABLE", "INTERNAL": return .retryable
        case "QUOTA_EXCEEDED", "RESOURCE_EXHAUSTED": return .quota
        case "UNREGISTERED", "SENDER_ID_MISMATCH": return .tokenDead
        case "UNAUTHENTICATED": return .auth
        case "THIRD_PARTY_AUTH_ERROR": return .permanent
        case "INVALID_ARGUMENT":
            // FCM answers INVALID_ARGUMENT both for a bad payload and for a malformed
            // registration token; only the field violation tells them apart.
            return violations.contains { $0.field == "message.token" || $0.field.hasSuffix(".token") } ? .tokenDead : .permanent
        default:
            switch httpStatus {
            case 429: return .quota
            case 401: return .auth
            case 500...599: return .retryable
            default: return .permanent
            }
        }
    }

    static func fallbackCode(httpStatus: Int) -> String {
        switch httpStatus {
        case 400: return "INVALID_ARGUMENT"
        case 401: return "UNAUTHENTICATED"
        case 403: return "PERMISSION_DENIED"
        case 404: return "NOT_FOUND"
        case 429: return "QUOTA_EXCEEDED"
        case 500: return "INTERNAL"
        case 503: return "UNAVAILABLE"
        default: return "HTTP_\(httpStatus)"
        }
    }

    /// FCM's error JSON: `{"error": {"code", "message", "status", "details": [...]}}`.
    struct ErrorBody {
        var message: String?
        var status: String?
        var fcmErrorCode: String?
        var fieldViolations: [FCMError.FieldViolation] = []

        static func parse(_ body: [UInt8]) -> ErrorBody? {
            guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
                let error = object["error"] as? [String: Any]
            else { return nil }
            var result = ErrorBody(message: error["message"] as? String, status: error["status"] as? String)
            for detail in error["details"] as? [[String: Any]] ?? [] {
                let type = detail["@type"] as? String ?? ""
                if type.hasSuffix("google.firebase.fcm.v1.FcmError"), let c = detail["errorCode"] as? String {
                    result.fcmErrorCode = c
                }
                if type.hasSuffix("google.rpc.BadRequest") {
                    for v in detail["fieldViolations"] as? [[String: Any]] ?? [] {
                        result.fieldViolations.append(.init(field: v["field"] as? String ?? "", description: v["description"] as? String ?? ""))
                    }
                }
            }
            return result
        }
    }
}
