import JSON

/// FCM HTTP v1's error answers: `{"error": {"code", "message", "status", "details": [...]}}`,
/// with a `google.firebase.fcm.v1.FcmError` detail carrying the FCM error code and, for bad
/// requests, a `google.rpc.BadRequest` detail with field violations.
struct FCMErrorResponse {
    var httpStatus: Int
    var status: String
    var message: String
    var fcmErrorCode: String?
    var violations: [MessageValidator.Violation] = []
    var retryAfterSeconds: Int?

    /// The answer FCM gives for an FCM error code.
    static func forCode(_ code: String, retryAfterSeconds: Int? = nil) -> FCMErrorResponse {
        switch code {
        case "UNREGISTERED":
            FCMErrorResponse(httpStatus: 404, status: "NOT_FOUND", message: "Requested entity was not found.", fcmErrorCode: code)
        case "SENDER_ID_MISMATCH":
            FCMErrorResponse(httpStatus: 403, status: "PERMISSION_DENIED", message: "SenderId mismatch", fcmErrorCode: code)
        case "INVALID_ARGUMENT":
            FCMErrorResponse(
                httpStatus: 400, status: "INVALID_ARGUMENT", message: "The registration token is not a valid FCM registration token",
                fcmErrorCode: code, violations: [.init(field: "message.token", description: "The registration token is not a valid FCM registration token")])
        case "THIRD_PARTY_AUTH_ERROR":
            FCMErrorResponse(httpStatus: 401, status: "UNAUTHENTICATED", message: "Auth error from APNS or Web Push Service", fcmErrorCode: code)
        case "QUOTA_EXCEEDED":
            FCMErrorResponse(
                httpStatus: 429, status: "RESOURCE_EXHAUSTED", message: "Quota exceeded for quota metric 'Send requests' of service 'fcm.googleapis.com'.",
                fcmErrorCode: code, retryAfterSeconds: retryAfterSeconds)
        case "INTERNAL":
            FCMErrorResponse(httpStatus: 500, status: "INTERNAL", message: "Internal error encountered.", fcmErrorCode: code, retryAfterSeconds: retryAfterSeconds)
        default:
            FCMErrorResponse(
                httpStatus: 503, status: "UNAVAILABLE", message: "The service is currently unavailable.", fcmErrorCode: "UNAVAILABLE",
                retryAfterSeconds: retryAfterSeconds)
        }
    }

    /// An injected HTTP failure status as FCM would answer it.
    static func forStatus(_ status: Int, retryAfterSeconds: Int?) -> FCMErrorResponse {
        switch status {
        case 429: forCode("QUOTA_EXCEEDED", retryAfterSeconds: retryAfterSeconds)
        case 500: forCode("INTERNAL", retryAfterSeconds: retryAfterSeconds)
        default: forCode("UNAVAILABLE", retryAfterSeconds: retryAfterSeconds)
        }
    }

    static func invalidArgument(_ violations: [MessageValidator.Violation]) -> FCMErrorResponse {
        FCMErrorResponse(
            httpStatus: 400, status: "INVALID_ARGUMENT",
            message: violations.first.map { "Request contains an invalid argument: \($0.description)" } ?? "Request contains an invalid argument.",
            fcmErrorCode: "INVALID_ARGUMENT", violations: violations)
    }

    /// A missing, unknown or expired access token (no FcmError detail, as FCM answers it).
    static let unauthenticated = FCMErrorResponse(
        httpStatus: 401, status: "UNAUTHENTICATED",
        message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
        fcmErrorCode: nil)

    var response: EmulatorResponse {
        var details: [JSONValue] = []
        if let fcmErrorCode {
            details.append(.object([
                ("@type", .string("type.googleapis.com/google.firebase.fcm.v1.FcmError")), ("errorCode", .string(fcmErrorCode)),
            ]))
        }
        if !violations.isEmpty {
            details.append(.object([
                ("@type", .string("type.googleapis.com/google.rpc.BadRequest")),
                ("fieldViolations", .array(violations.map { .object([("field", .string($0.field)), ("description", .string($0.description))]) })),
            ]))
        }
        var error: [(key: String, value: JSONValue)] = [("code", .int(Int64(httpStatus))), ("message", .string(message)), ("status", .string(status))]
        if !details.isEmpty { error.append(("details", .array(details))) }
        var headers = [("content-type", "application/json; charset=UTF-8")]
        if let retryAfterSeconds { headers.append(("retry-after", String(retryAfterSeconds))) }
        return EmulatorResponse(status: httpStatus, headers: headers, body: JSONWriter.write(.object([("error", .object(error))])))
    }
}
