import Dates

/// Rules for a push to devices the event names (`fid`, `token`, `fids`, `tokens`), with the user
/// whose preferences apply named beside the target (`user: {field: /user_id}`; docs/rules.md).
extension MappingSet {
    /// Applies `rules` to `rendered`: the user's mutes and quiet hours withhold the push; a device
    /// of theirs that the registry lists as having muted the category is left out.
    func judge(
        _ rendered: Rendered, _ rules: UserRules, lookup: UserLookup?, now: Int64?, clock: any WallClock, mayDefer: Bool
    ) -> Result<Rendered, MappingFailure> {
        guard let source = rules.user else { return .success(rendered) }
        do throws(MappingFailure) {
            let user = try Resolver(event: rendered.event, now: now, clock: clock).string(source, role: "user")
            guard !user.isEmpty else {
                throw .noTargets("the user ID from \(Resolver(event: rendered.event, now: now, clock: clock).fieldName(source)) is empty")
            }
            let record = try Self.record(of: user, lookup)
            // The devices are the event's; the registry may list some of them, with their mutes.
            let devices = rendered.messages.map { m in
                UserDevice(kind: m.target.kind, id: m.target.value, muted: record.devices.first { $0.id == m.target.value }?.muted ?? [])
            }
            let judgement = rules.judge(
                devices, user: user, preferences: record.preferences, now: now ?? clock.nowMilliseconds() / 1000, mayDefer: mayDefer)
            if let until = judgement.deferUntil {
                var waiting = rendered
                (waiting.user, waiting.messages) = (user, [])
                waiting.deferral = Deferral(due: until * 1000, subject: user, reason: .quietHours)
                return .success(waiting)
            }
            if let whole = judgement.whole {
                throw .withheld(
                    Withheld(eventType: rendered.event.type, eventID: rendered.event.id, user: user, rule: whole.rule, reason: whole.reason))
            }
            var judged = rendered
            judged.user = user
            judged.bypassed = judgement.bypassed
            let kept = Set(judgement.devices.map(\.id))
            judged.messages = rendered.messages.filter { kept.contains($0.target.value) }
            judged.withheldDevices = judgement.withheldDevices.map { WithheldDevice(device: $0, user: user, rule: .deviceMuted) }
            return .success(judged)
        } catch {
            return .failure(error)
        }
    }
}
