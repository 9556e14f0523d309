import JSON

/// FCM HTTP v1's error answers, each in the shape FCM is documented or seen to send
/// (docs/emulator.md lists every body with its source):
/// `{"error": {"code", "message", "status", "details": [...]}}`.
struct FCMErrorResponse {
    var httpStatus: Int
    var status: String
    var message: String
    /// The `details` array, in order.
    var details: [JSONValue] = []
    var retryAfterSeconds: Int?

    static func fcmError(_ code: String) -> JSONValue {
        .object([("@type", .string("type.googleapis.com/google.firebase.fcm.v1.FcmError")), ("errorCode", .string(code))])
    }

    /// The answer FCM gives for an FCM error code about the device identifier or the service.
    static func forCode(_ code: String, retryAfterSeconds: Int? = nil) -> FCMErrorResponse {
        switch code {
        case "UNREGISTERED":
            // pushiko's "FCM responses" (bloomberg.github.io/pushiko/fcm_responses).
            FCMErrorResponse(httpStatus: 404, status: "NOT_FOUND", message: "Requested entity was not found.", details: [fcmError(code)])
        case "SENDER_ID_MISMATCH":
            FCMErrorResponse(httpStatus: 403, status: "PERMISSION_DENIED", message: "SenderId mismatch", details: [fcmError(code)])
        case "INVALID_ARGUMENT":
            // The error-codes guide, "Example 2": no google.rpc.BadRequest, only the FcmError.
            FCMErrorResponse(
                httpStatus: 400, status: "INVALID_ARGUMENT", message: "The registration token is not a valid FCM registration token",
                details: [fcmError(code)])
        case "THIRD_PARTY_AUTH_ERROR":
            FCMErrorResponse(
                httpStatus: 401, status: "UNAUTHENTICATED", message: "Auth error from APNS or Web Push Service", details: [fcmError(code)])
        case "INTERNAL":
            // pushiko's "FCM responses".
            FCMErrorResponse(
                httpStatus: 500, status: "INTERNAL", message: "Internal error encountered.", details: [fcmError(code)],
                retryAfterSeconds: retryAfterSeconds)
        default:
            FCMErrorResponse(
                httpStatus: 503, status: "UNAVAILABLE", message: "The service is currently unavailable.", details: [fcmError("UNAVAILABLE")],
                retryAfterSeconds: retryAfterSeconds)
        }
    }

    /// A send for a project the access token's service account has no permission on (another
    /// project's account, or a project ID that does not exist): Google's IAM refusal, with no
    /// FcmError, as fcm-django#213 quotes firebase-admin-node's error for it and
    /// firebase-admin-go#238 describes (403 when "the project-id [is] wrong").
    static func permissionDenied(project: String) -> FCMErrorResponse {
        FCMErrorResponse(
            httpStatus: 403, status: "PERMISSION_DENIED",
            message:
                "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist)."
        )
    }

    /// An injected HTTP failure status as FCM would answer it: 429 is the project's quota.
    static func forStatus(_ status: Int, retryAfterSeconds: Int?) -> FCMErrorResponse {
        switch status {
        case 429: projectQuota(retryAfterSeconds: retryAfterSeconds)
        case 500: forCode("INTERNAL", retryAfterSeconds: retryAfterSeconds)
        default: forCode("UNAVAILABLE", retryAfterSeconds: retryAfterSeconds)
        }
    }

    /// The project's quota, as firebase-admin-go#719 quotes it: Google's generic quota error
    /// (`ErrorInfo` with `metadata.quota_limit: SendsPerMinutePerProject`, a `Help` link), and no
    /// FcmError detail at all.
    static func projectQuota(retryAfterSeconds: Int?) -> FCMErrorResponse {
        FCMErrorResponse(
            httpStatus: 429, status: "RESOURCE_EXHAUSTED",
            message:
                "Quota exceeded for quota metric 'Send requests' and limit 'Send requests per minute' of service 'fcm.googleapis.com' for consumer 'project_number:000000000000'.",
            details: [
                .object([
                    ("@type", .string("type.googleapis.com/google.rpc.ErrorInfo")), ("reason", .string("RATE_LIMIT_EXCEEDED")),
                    ("domain", .string("googleapis.com")),
                    (
                        "metadata",
                        .object([
                            ("quota_limit_value", .string("600000")), ("consumer", .string("projects/000000000000")),
                            ("quota_metric", .string("fcm.googleapis.com/send_requests")), ("quota_unit", .string("1/min/{project}")),
                            ("service", .string("fcm.googleapis.com")), ("quota_location", .string("global")),
                            ("quota_limit", .string("SendsPerMinutePerProject")),
                        ])
                    ),
                ]),
                .object([
                    ("@type", .string("type.googleapis.com/google.rpc.Help")),
                    (
                        "links",
                        .array([
                            .object([
                                ("description", .string("Request a higher quota limit.")),
                                ("url", .string("https://cloud.google.com/docs/quotas/help/request_increase")),
                            ])
                        ])
                    ),
                ]),
            ],
            retryAfterSeconds: retryAfterSeconds)
    }

    /// One device's or one topic's quota: QUOTA_EXCEEDED with the `google.rpc.QuotaFailure`
    /// extension the ErrorCode reference promises. The topic's message is the one ntfy#289
    /// reports; the device's names its cause as the reference does. `opaque` leaves every hint
    /// out (the generic RESOURCE_EXHAUSTED message, no QuotaFailure): what a client cannot
    /// tell apart from the project's quota by the answer alone.
    static func targetQuota(device: Bool, opaque: Bool, retryAfterSeconds: Int?) -> FCMErrorResponse {
        if opaque {
            return FCMErrorResponse(
                httpStatus: 429, status: "RESOURCE_EXHAUSTED", message: "Resource has been exhausted (e.g. check quota).",
                details: [fcmError("QUOTA_EXCEEDED")], retryAfterSeconds: retryAfterSeconds)
        }
        let cause = device ? "Device message rate exceeded." : "Topic quota exceeded."
        return FCMErrorResponse(
            httpStatus: 429, status: "RESOURCE_EXHAUSTED", message: cause,
            details: [
                fcmError("QUOTA_EXCEEDED"),
                .object([
                    ("@type", .string("type.googleapis.com/google.rpc.QuotaFailure")),
                    ("violations", .array([.object([("description", .string(cause))])])),
                ]),
            ],
            retryAfterSeconds: retryAfterSeconds)
    }

    /// A bad payload, as the error-codes guide's "Example 1": the message is the first
    /// violation's description, and the only detail is `google.rpc.BadRequest`.
    static func invalidArgument(_ violations: [MessageValidator.Violation]) -> FCMErrorResponse {
        FCMErrorResponse(
            httpStatus: 400, status: "INVALID_ARGUMENT",
            message: violations.first?.description ?? "Request contains an invalid argument.",
            details: violations.isEmpty
                ? []
                : [
                    .object([
                        ("@type", .string("type.googleapis.com/google.rpc.BadRequest")),
                        (
                            "fieldViolations",
                            .array(violations.map { .object([("field", .string($0.field)), ("description", .string($0.description))]) })
                        ),
                    ])
                ])
    }

    /// A message over the size limit, as pushiko records it: no field, no details.
    static let tooBig = FCMErrorResponse(httpStatus: 400, status: "INVALID_ARGUMENT", message: "Request contains an invalid argument.")

    /// A missing, unknown or expired access token (no FcmError detail, as FCM answers it).
    static let unauthenticated = FCMErrorResponse(
        httpStatus: 401, status: "UNAUTHENTICATED",
        message:
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")

    /// The code tests and stats know the answer by: the FcmError's, else the status.
    var code: String {
        for detail in details {
            if case .string(let code)? = detail["errorCode"] { return code }
        }
        return status
    }

    var response: EmulatorResponse {
        var error: [(key: String, value: JSONValue)] = [
            ("code", .int(Int64(httpStatus))), ("message", .string(message)), ("status", .string(status)),
        ]
        if !details.isEmpty { error.append(("details", .array(details))) }
        var headers = [("content-type", "application/json; charset=UTF-8")]
        if let retryAfterSeconds { headers.append(("retry-after", String(retryAfterSeconds))) }
        return EmulatorResponse(status: httpStatus, headers: headers, body: JSONWriter.write(.object([("error", .object(error))])))
    }
}
