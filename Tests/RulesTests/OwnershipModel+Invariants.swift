import Rules

/// The invariants of design §5.1 and §8.1, checked against what FCM truly delivered.
extension OwnershipModel {
    /// Records a delivery; a device push delivered again is allowed only when the earlier
    /// one's acknowledgement was not in the log the sender had read (the step-5 window) or its
    /// answer was lost.
    mutating func deliver(_ n: NotificationID, _ target: String, _ answer: FCMAnswer, view: Int) -> Int {
        for earlier in deliveries where earlier.notification == n && earlier.target == target {
            if let recorded = earlier.recordedAt, recorded < view, earlier.time > now - config.dedupWindow {
                stats.violations.append("\(n) to \(target) delivered at \(earlier.time) and, known acknowledged, again at \(now)")
            } else if earlier.answer == .lostAnswer {
                stats.duplicatesAfterLostAnswer += 1
            } else {
                stats.duplicatesInWindow += 1
            }
            break
        }
        stats.deliveries += 1
        deliveries.append(Delivery(notification: n, target: target, time: now, answer: answer))
        return deliveries.count - 1
    }

    /// A push withheld as `cap` at `now`: at least `max` other notifications were delivered in
    /// the window, or are in doubt in the owner's view (an outcome in doubt, or a reservation
    /// with no outcome whose sender may still deliver).
    mutating func checkWithheld(_ n: NotificationID, view: InMemoryRulesState) {
        let since = now - config.cap.per
        var counted = Set(deliveries.filter { $0.time > since && $0.notification != n }.map(\.notification))
        for (m, state) in view.notifications where m != n {
            for attempt in state.attempts.map(\.state) {
                let doubtful =
                    (attempt.status == .inDoubt && attempt.at > since)
                    || (attempt.status == .reserved && attempt.at + config.policy.sendLimit > since)
                if doubtful { counted.insert(m) }
            }
        }
        if counted.count < config.cap.max {
            stats.violations.append("\(n) withheld as cap at \(now) with \(counted.count) acknowledged or in doubt (max \(config.cap.max))")
        }
    }

    /// No window of `per` holds more than `max` distinct delivered notifications (the only cap
    /// key of the model: the user).
    mutating func checkWindows() {
        for start in Set(deliveries.map(\.time)) {
            let inside = Set(deliveries.filter { $0.time >= start && $0.time < start + config.cap.per }.map(\.notification))
            stats.maxInWindow = max(stats.maxInWindow, inside.count)
            if inside.count > config.cap.max {
                stats.violations.append("\(inside.count) notifications delivered in [\(start), \(start + config.cap.per)) (max \(config.cap.max))")
            }
        }
    }
}
