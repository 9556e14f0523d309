import Dates
import Preferences

/// What the rules decided for one push to one user.
public struct RuleJudgement: Sendable, Equatable {
    /// The devices that get the push (empty when ``whole`` is set).
    public var devices: [UserDevice]
    /// Devices left out while others get it (a device that muted the category).
    public var withheldDevices: [UserDevice] = []
    /// Set when the push goes to none of the user's devices.
    public var whole: Withholding?
    /// Rules that would have withheld the push, bypassed because it is critical.
    public var bypassed: [WithholdRule] = []
    /// Set when the push waits until the quiet hours end (seconds since the epoch; `outside: defer`).
    public var deferUntil: Int64?

    public struct Withholding: Sendable, Equatable {
        public var rule: WithholdRule
        /// A sentence for logs and outcome records.
        public var reason: String
    }
}

extension UserRules {
    /// Applies the rules, in the documented order (docs/rules.md): the user's mutes, the
    /// devices' mutes, then quiet hours. A critical push bypasses all three, and says which
    /// it bypassed.
    ///
    /// - Parameters:
    ///   - devices: the user's devices that the target's filter let through (not empty).
    ///   - now: seconds since the epoch: the instant judged against quiet hours.
    ///   - mayDefer: with `outside: defer`, a push inside the quiet hours waits until they end;
    ///     false (deferred too often already: the user's hours keep moving), it is sent.
    public func judge(
        _ devices: [UserDevice], user: String, preferences p: UserPreferences, now: Int64, mayDefer: Bool = true
    ) -> RuleJudgement {
        var judgement = RuleJudgement(devices: devices)
        if let category {
            if p.choices.muted.contains(category) {
                if !critical { return withheld(.muted, "user \(user) muted the category \"\(category)\"") }
                judgement.bypassed.append(.muted)
            }
            let muting = devices.filter { $0.muted.contains(category) }
            if !muting.isEmpty {
                if critical {
                    judgement.bypassed.append(.deviceMuted)
                } else if muting.count == devices.count {
                    return withheld(.deviceMuted, "every device of user \(user) muted the category \"\(category)\"")
                } else {
                    judgement.devices = devices.filter { !$0.muted.contains(category) }
                    judgement.withheldDevices = muting
                }
            }
        }
        if let window = quietWindow(for: p), window.contains(unixSeconds: now, in: p.zone) {
            if critical {
                judgement.bypassed.append(.quietHours)
            } else if deferInQuietHours, mayDefer, let end = window.end(containing: now, in: p.zone) {
                return RuleJudgement(devices: [], deferUntil: end)
            } else if !deferInQuietHours {
                return withheld(.quietHours, Self.quietReason(window, zone: p.zone, now: now))
            }
        }
        return judgement
    }

    /// The quiet hours that apply: the user's own (or none, for `off`), else the mapping's
    /// window; a mapping without `quiet_hours` has none.
    public func quietWindow(for p: UserPreferences) -> QuietWindow? {
        guard let quietHours else { return nil }
        switch (p.choices.quietHours, quietHours) {
        case (.off?, _): return nil
        case (.window(let own)?, _): return own
        case (nil, .window(let window)): return window
        case (nil, .usersOwn): return nil
        }
    }

    private func withheld(_ rule: WithholdRule, _ reason: String) -> RuleJudgement {
        RuleJudgement(devices: [], whole: .init(rule: rule, reason: reason))
    }

    /// "local time 23:10 in Europe/Berlin is inside the quiet hours 22:00–07:30, which end at
    /// 2027-03-28T05:30:00.000Z".
    static func quietReason(_ window: QuietWindow, zone: ZoneRules, now: Int64) -> String {
        let local = now + Int64(zone.offset(atUnixSeconds: now))
        let minute = Int(CivilDate.split(seconds: local).secondOfDay / 60)
        let clock = ClockTime(minuteOfDay: minute).map(\.description) ?? "?"
        var reason = "local time \(clock) in \(zone.name) is inside the quiet hours \(window.from)–\(window.to)"
        if let end = window.end(containing: now, in: zone) { reason += ", which end at \(RFC3339.format(milliseconds: end * 1000))" }
        return reason
    }
}
