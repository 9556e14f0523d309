import Mapping
import Rules

/// One rendered push of a mapping with `cap` or `dedup`, as the rules engine takes it
/// (docs/design/per-user-rules.md §5.2): its notification N = H(event ID, mapping, subject),
/// the subject that owns its state, and its targets. Pure.
///
/// | the mapping | its subject |
/// |---|---|
/// | a `user` target, or a `user:` | the user ID |
/// | one `fid`, `token`, `topic` or `condition`, no `user:` | that target's value (a topic keyed by device has it as its key) |
/// | a `fids`/`tokens` fan-out, no `user:` (dedup only) | the event ID |
public enum StatefulPush {
    /// The workers' policy: a capped or deduplicated push may still go out up to 10 minutes
    /// after its reservation (FCM's retry budget and then some, ``RulesPolicy/sendLimit``).
    /// `render --rules-store` judges with the same.
    public static let policy = RulesPolicy(sendLimit: 600_000)

    /// `fid:…`, `token:…`, `topic:…`: how a target is named in the rules' facts (a fid and a
    /// token with the same text are two devices).
    public static func target(_ t: MessageTarget) -> String { "\(t.kind.rawValue):\(t.value)" }

    /// The subject whose state partition decides `rendered` (the table above).
    public static func subject(of rendered: MappingSet.Rendered) -> String {
        if let user = rendered.user { return user }
        if rendered.messages.count == 1, let only = rendered.messages.first { return only.target.value }
        return rendered.event.id
    }

    /// The attempt for `rendered`, an event of `mapping` (its event type) with these rules. A
    /// cap implies dedup over its window (a re-keyed event read twice is one notification,
    /// §5.6), so the dedup window is the longer of the two.
    public static func attempt(
        _ rendered: MappingSet.Rendered, mapping: String, rules: UserRules, stateful: StatefulRules, policy: RulesPolicy, owner: String = "",
        notification: NotificationID? = nil
    ) -> NotificationAttempt {
        let targets = rendered.messages.map { target($0.target) }
        let subject = CapSubject(user: rendered.user, category: rules.category, mapping: mapping, devices: targets.map(DeviceKey.init(target:)))
        let caps = stateful.cap.map { [capRule($0)] } ?? []
        return NotificationAttempt(
            notification: notification ?? NotificationID(eventID: rendered.event.id, mapping: mapping, subject: Self.subject(of: rendered)),
            subject: subject,
            targets: targets, caps: caps, dedupWindow: Int64(stateful.effectiveDedupWindow) * 1_000, policy: policy, owner: owner)
    }

    /// A mapping's cap as the rules count it (milliseconds).
    public static func capRule(_ cap: StatefulRules.Cap) -> CapRule {
        CapRule(
            max: cap.max, per: Int64(cap.per) * 1_000,
            by: Set(
                cap.by.map { d -> CapRule.Dimension in
                    switch d {
                    case .user: .user
                    case .category: .category
                    case .mapping: .mapping
                    case .device: .device
                    }
                }))
    }
}
