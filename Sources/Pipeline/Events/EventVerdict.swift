import FCM
import Mapping

/// What became of one event, decided from its rendering and its sends' results. Pure.
///
/// The rules (architecture.md's error table):
/// - every send acknowledged → delivered;
/// - UNREGISTERED, or INVALID_ARGUMENT about the device identifier (FCM's "not a valid FCM
///   registration token") → an invalidation record; the send counts as done;
/// - SENDER_ID_MISMATCH → an invalidation record *and* a dead-letter record (the device
///   belongs to another project: the event may be worth sending there);
/// - a permanent error (bad payload, THIRD_PARTY_AUTH_ERROR, unknown codes), or a retryable one
///   whose retries ran out → a dead-letter record;
/// - a configuration error (untrusted certificate, refused service account) → the worker stops:
///   it is not the event's fault, so the event stays unfinished and is not committed;
/// - a send cut short because the worker is stopping → abandoned: not done, no records;
/// - older than its mapping's `max_age` → nothing sent: skipped, or a dead-letter record
///   (`too_old: dead-letter`); counted as too old either way;
/// - taken by no variant of its type → nothing sent: skipped, or a dead-letter record
///   (`unmatched: dead-letter`, reason `no_variant`); counted as unmatched either way;
/// - withheld by a rule of the user's (a muted category, quiet hours) → nothing sent: skipped,
///   counted by rule.
public struct EventVerdict: Sendable, Equatable {
    public enum Disposition: Sendable, Equatable {
        /// Every send was acknowledged (or its token is gone).
        case delivered
        /// Deliberately not sent (an unmapped event type, with `unknown_event_types: skip`; an
        /// event older than its `max_age`, with `too_old: skip`).
        case skipped(reason: String)
        /// Done once the dead-letter record is acknowledged by Kafka.
        case deadLetter(DeadLetterReason)
        /// Nothing can be sent until the operator fixes the setup; stop the worker.
        case fatal(String)
        /// The worker stopped before FCM answered: not done, so it is sent again after a restart.
        case abandoned
        /// Its push waits until `due` (UTC milliseconds, its `send_at`): done once Kafka
        /// acknowledged its timer record; rendered again and sent at `due` (docs/timers.md).
        case deferred(due: Int64)
    }

    public var disposition: Disposition
    /// Tokens the backend should delete.
    public var invalidations: [TokenInvalidation]
    /// Sends acknowledged by FCM.
    public var sent: Int
    /// Older than its mapping's `max_age`, so not sent (skipped or dead-lettered): counted as
    /// too old by the metrics and replay's progress, whichever the disposition.
    public var tooOld: Bool
    /// A `user` target whose user has no device: not sent (skipped or dead-lettered), counted.
    public var noDevices: Bool
    /// Taken by no variant of its event type: not sent (skipped or dead-lettered), counted.
    public var unmatched = false
    /// Why it was skipped, as a code (`unknown_event_type`, `too_old`, `no_variant`, …).
    public var skipCode: String?

    public init(
        disposition: Disposition, invalidations: [TokenInvalidation] = [], sent: Int = 0, tooOld: Bool = false, noDevices: Bool = false
    ) {
        self.disposition = disposition
        self.invalidations = invalidations
        self.sent = sent
        self.tooOld = tooOld
        self.noDevices = noDevices
    }

    /// The verdict for an event the mapping core could not turn into messages.
    public static func mappingFailed(_ failure: MappingFailure, skipUnknownTypes: Bool, skipUsersWithoutDevices: Bool = true) -> EventVerdict {
        var verdict = verdict(failure, skipUnknownTypes: skipUnknownTypes, skipUsersWithoutDevices: skipUsersWithoutDevices)
        if case .skipped = verdict.disposition { verdict.skipCode = failure.code }
        return verdict
    }

    private static func verdict(_ failure: MappingFailure, skipUnknownTypes: Bool, skipUsersWithoutDevices: Bool) -> EventVerdict {
        switch failure {
        case .noPush, .activitySkipped, .withheld:
            return EventVerdict(disposition: .skipped(reason: failure.reason))
        case .unknownEventType where skipUnknownTypes:
            return EventVerdict(disposition: .skipped(reason: failure.reason))
        case .noDevices where skipUsersWithoutDevices:
            return EventVerdict(disposition: .skipped(reason: failure.reason), noDevices: true)
        case .noDevices:
            return EventVerdict(disposition: .deadLetter(DeadLetterReason(code: failure.code, reason: failure.reason)), noDevices: true)
        case .registryUnavailable:
            // Not the event's fault: it stays unfinished, and the worker stops.
            return EventVerdict(disposition: .fatal(failure.reason))
        case .tooOld(let old) where old.action == .skip:
            return EventVerdict(disposition: .skipped(reason: failure.reason), tooOld: true)
        case .tooOld:
            return EventVerdict(disposition: .deadLetter(DeadLetterReason(code: failure.code, reason: failure.reason)), tooOld: true)
        case .noVariant(let none):
            var verdict =
                none.action == .skip
                ? EventVerdict(disposition: .skipped(reason: failure.reason))
                : EventVerdict(disposition: .deadLetter(DeadLetterReason(code: failure.code, reason: failure.reason)))
            verdict.unmatched = true
            return verdict
        default:
            return EventVerdict(disposition: .deadLetter(DeadLetterReason(code: failure.code, reason: failure.reason)))
        }
    }

    /// The verdict for an event whose mapping names a project the config does not have (a
    /// field's value, or a name the worker's checks could not see): dead-lettered, nothing sent.
    public static func unknownProject(_ name: String?) -> EventVerdict {
        let reason =
            name.map { "no FCM project named \"\($0)\" in fcm.projects" }
            ?? "the mapping names no project and the config has no default project (fcm.default_project)"
        return EventVerdict(disposition: .deadLetter(DeadLetterReason(code: "unknown_project", reason: reason)))
    }

    /// The verdict for an event's sends: each message with its result after retries.
    public static func sends(_ results: [(message: FCMMessage, result: FCMClient.SendResult)]) -> EventVerdict {
        var invalidations: [TokenInvalidation] = []
        var failures: [(FCMError, attempts: Int)] = []
        var sent = 0
        for (message, result) in results {
            switch result.outcome {
            case .success:
                sent += 1
            case .failure(let error):
                if error.isShutdown {
                    return EventVerdict(disposition: .abandoned, invalidations: [], sent: sent)
                }
                if error.kind == .configuration {
                    return EventVerdict(disposition: .fatal(error.description), invalidations: [], sent: sent)
                }
                if error.invalidatesToken, message.target.isDevice {
                    // On a Live Activity send, UNREGISTERED is taken to mean the activity's token:
                    // FCM does not say which of the two it found dead (docs/mapping.md).
                    let activity = error.code == .unregistered ? message.liveActivity : nil
                    invalidations.append(TokenInvalidation(message.target, code: error.code, liveActivity: activity))
                    if error.onlyInvalidates(message.target) { continue }
                }
                failures.append((error, result.attempts))
            }
        }
        guard let (first, attempts) = failures.first else {
            return EventVerdict(disposition: .delivered, invalidations: invalidations, sent: sent)
        }
        let exhausted = first.isRetryable
        var reason = exhausted ? "gave up after \(attempts) attempts: \(first)" : "\(first)"
        if results.count > 1 {
            reason = "\(failures.count) of \(results.count) sends failed; first: " + reason
        }
        let code = exhausted ? "fcm_retries_exhausted" : "fcm_" + first.code.name.lowercased()
        let dead = DeadLetterReason(code: code, reason: reason, fcmErrorCode: first.code.name, attempts: attempts)
        return EventVerdict(disposition: .deadLetter(dead), invalidations: invalidations, sent: sent)
    }
}

/// Why an event was dead-lettered; becomes the record's `pushbridge-*` headers.
public struct DeadLetterReason: Sendable, Equatable {
    /// A stable code: a mapping failure's code (`invalid_json`, `too_large`, …),
    /// `fcm_<error code>` for a permanent FCM error, or `fcm_retries_exhausted`.
    public var code: String
    /// A sentence for people.
    public var reason: String
    /// FCM's error code, when FCM refused the message.
    public var fcmErrorCode: String?
    /// Send attempts made (0 when nothing was sent).
    public var attempts: Int

    public init(code: String, reason: String, fcmErrorCode: String? = nil, attempts: Int = 0) {
        self.code = code
        self.reason = reason
        self.fcmErrorCode = fcmErrorCode
        self.attempts = attempts
    }
}

/// A device identifier (FID or registration token) FCM says is dead or not ours.
public struct TokenInvalidation: Sendable, Equatable {
    /// The FID or registration token.
    public var device: String
    /// Which kind of identifier it is: ``MessageTarget/Kind/fid`` or ``MessageTarget/Kind/token``.
    public var kind: MessageTarget.Kind
    /// FCM's error code: `UNREGISTERED`, `SENDER_ID_MISMATCH` or `INVALID_ARGUMENT`.
    public var code: FCMError.Code
    /// Set when the dead token is a Live Activity's (Apple's token), not the device's: the
    /// device stays, the activity cannot be updated any more.
    public var liveActivity: LiveActivityInfo?

    public init(_ target: MessageTarget, code: FCMError.Code, liveActivity: LiveActivityInfo? = nil) {
        self.device = target.value
        self.kind = target.kind
        self.code = code
        self.liveActivity = liveActivity
    }

    public init(token: String, code: FCMError.Code) {
        self.init(MessageTarget(.token, token), code: code)
    }
}

extension FCMError {
    /// FCM says the device is gone (UNREGISTERED, an invalid identifier): an invalidation
    /// record, and the send counts as done. SENDER_ID_MISMATCH is not: the device is another
    /// project's, and the event is also dead-lettered.
    func onlyInvalidates(_ target: MessageTarget) -> Bool {
        invalidatesToken && target.isDevice && code != .senderIDMismatch
    }
}
