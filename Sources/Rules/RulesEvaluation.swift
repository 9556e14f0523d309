/// A cap's verdict for one notification.
public enum CapVerdict: Hashable, Sendable {
    /// Room: reserve and send.
    case allow
    /// Counted plus in flight here reach `max` and some are in flight: wait until one resolves
    /// (``InFlightTable``), then decide again, instead of guessing.
    case wait(on: Set<NotificationID>)
    /// `max` notifications acknowledged or in doubt in the window for `key`: withheld as `cap`.
    case withhold(key: CapKey, counted: Int)
}

/// The stateful rules' verdicts, pure over a ``RulesState`` and this owner's ``InFlightTable``
/// (design §5.1, §5.5, §6.1: dedup, then caps).
public enum RulesEvaluation {
    /// Splits `targets` into those to send and those whose push of `notification` FCM
    /// acknowledged within `window` (ms) before `now` (withheld as `duplicate`).
    ///
    /// A push's acknowledgement is read from its notification's state (one read for all
    /// targets): a `sent` fact lists the pushes of its own notification (``DevicePushID`` is
    /// derived from N), so no store needs an index of pushes.
    public static func dedup<State: RulesState>(
        _ notification: NotificationID, targets: [String], now: Int64, window: Int64, state: State
    ) throws(State.Failure) -> (send: [String], duplicates: [String]) {
        dedup(notification, targets: targets, now: now, window: window, known: try state.state(of: notification))
    }

    /// ``dedup(_:targets:now:window:state:)`` over `known`, the notification's state as read.
    public static func dedup(
        _ notification: NotificationID, targets: [String], now: Int64, window: Int64, known: NotificationState?
    ) -> (send: [String], duplicates: [String]) {
        // Nothing acknowledged (a first attempt): every target is sent, and no push ID is hashed.
        guard let known, !known.devices.isEmpty else { return (targets, []) }
        var send: [String] = []
        var duplicates: [String] = []
        for target in targets {
            if let at = known.acknowledged(DevicePushID(notification: notification, target: target)), at > now &- window {
                duplicates.append(target)
            } else {
                send.append(target)
            }
        }
        return (send, duplicates)
    }

    /// `cap`'s verdict for `notification` (which is `subject`) at `now`: a notification counts
    /// in the window `(now − per, now]` while ``NotificationState/countsUntil(sendLimit:)`` is
    /// inside it; one in flight here counts as in flight, not as settled. Withheld only when
    /// `max` settled ones exist for one of its keys.
    ///
    /// The notification itself is never counted: a re-processed or re-sent one (already counted
    /// by an earlier attempt) is checked against the others only. It is still checked: its new
    /// delivery may fall in windows its earlier one has left (found by the ownership model).
    public static func cap<State: RulesState>(
        _ cap: CapRule, notification: NotificationID, subject: CapSubject, now: Int64, state: State, inFlight: InFlightTable,
        policy: RulesPolicy
    ) throws(State.Failure) -> CapVerdict {
        var waitOn: Set<NotificationID> = []
        for key in cap.keys(of: subject) {
            let counted = Set(try Self.counted(key, per: cap.per, besides: notification, now: now, state: state, policy: policy).keys)
            let flying = inFlight.notifications(countingToward: key).subtracting([notification])
            let settled = counted.subtracting(flying)
            if settled.count >= cap.max { return .withhold(key: key, counted: settled.count) }
            if settled.count + flying.count >= cap.max { waitOn.formUnion(flying) }
        }
        return waitOn.isEmpty ? .allow : .wait(on: waitOn)
    }

    /// The notifications other than `notification` that count toward `key` in the window
    /// `(now − per, now]` of `state`, each with the instant it stops counting toward it
    /// (``NotificationState/countsUntil(sendLimit:)`` + `per`): what ``cap(_:notification:subject:now:state:inFlight:policy:)``
    /// counts, and what `render --rules-store` reports (when the oldest leaves the window).
    public static func counted<State: RulesState>(
        _ key: CapKey, per: Int64, besides notification: NotificationID, now: Int64, state: State, policy: RulesPolicy
    ) throws(State.Failure) -> [NotificationID: Int64] {
        let since = now &- per
        var counted: [NotificationID: Int64] = [:]
        for (n, until) in try state.notifications(of: key, countingAfter: since, policy: policy) where n != notification && until > since {
            counted[n] = until &+ per
        }
        return counted
    }
}
