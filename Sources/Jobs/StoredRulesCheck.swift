import Mapping
import Pipeline
import Rules
import RulesStore

/// What a worker's rules store says of one rendered event of a mapping with `cap` or `dedup`
/// (`render --rules-store`, `preview --rules-store`; docs/rules.md#caps-and-dedup).
///
/// Decided by the engine's own ``NotificationAttempt/decide(now:state:inFlight:)`` over the
/// store as it is, with nothing in flight (a command has no reservations of its own), so it
/// says what the owner of the event's state partition would decide at `now` if that store is
/// the partition's. Nothing is written: the store is opened read-only beside a running worker.
public struct StoredRulesCheck: Sendable {
    public enum Verdict: Sendable, Equatable {
        /// Room: sent to ``targets``.
        case send
        /// FCM acknowledged this push to every device within the dedup window: withheld `duplicate`.
        case duplicate
        /// The cap is full: withheld `cap` (or dead-lettered `capped` with `over: dead-letter`).
        case capped
        /// Nothing to push (the user's rules withheld every device).
        case noTargets
    }

    /// A cap's window for one key, as the cap counts it now.
    public struct Window: Sendable, Equatable {
        /// Notifications acknowledged (or maybe delivered) in the window, this one left out.
        public var counted: Int
        public var max: Int
        /// When the oldest of them leaves the window (ms since 1970); nil: none counted.
        public var oldestLeavesAt: Int64?
    }

    public var verdict: Verdict
    /// The targets (`fid:…`, `token:…`) that would be pushed: the rendered ones less the duplicates.
    public var targets: [String]
    /// Targets whose push of this notification FCM acknowledged within the dedup window, with
    /// when (ms since 1970).
    public var duplicates: [(target: String, acknowledgedAt: Int64)]
    /// The cap's fullest window (the one that withheld it, when capped); nil without a cap.
    public var window: Window?

    /// Judges `rendered`, an event of a mapping with `cap` or `dedup` (`mapping`), at `now` (ms).
    /// - Throws: ``RulesStoreError`` when the store cannot be read.
    public static func check<State: RulesState>(
        _ rendered: MappingSet.Rendered, mapping: StatefulMapping, state: State, now: Int64
    ) throws(State.Failure) -> StoredRulesCheck {
        let policy = StatefulPush.policy
        var attempt = StatefulPush.attempt(
            rendered, mapping: rendered.event.type, rules: mapping.rules, stateful: mapping.stateful, policy: policy)
        let all = attempt.targets
        var inFlight = InFlightTable()
        let decision = try attempt.decide(now: now, state: state, inFlight: &inFlight)
        let known = try state.state(of: attempt.notification)
        let duplicates = all.filter { !attempt.targets.contains($0) }.map { target in
            (target: target, acknowledgedAt: known?.acknowledged(DevicePushID(notification: attempt.notification, target: target)) ?? now)
        }
        var window: Window?
        for rule in attempt.caps {
            for key in rule.keys(of: attempt.subject) {
                let counted = try RulesEvaluation.counted(key, per: rule.per, besides: attempt.notification, now: now, state: state, policy: policy)
                let candidate = Window(counted: counted.count, max: rule.max, oldestLeavesAt: counted.values.min())
                if case .capped(let full, _) = decision, full != key { continue }
                if window == nil || candidate.counted > window!.counted { window = candidate }
            }
        }
        let verdict: Verdict
        switch decision {
        case .reserve, .wait: verdict = .send
        case .duplicate: verdict = .duplicate
        case .capped: verdict = .capped
        case .settle: verdict = .noTargets
        }
        return StoredRulesCheck(verdict: verdict, targets: verdict == .send ? attempt.targets : [], duplicates: duplicates, window: window)
    }

    /// Opens the store at `path` read-only (a worker may be running on it) and judges `rendered`.
    /// - Throws: ``RulesStoreError``: no store there, or not one.
    public static func check(
        _ rendered: MappingSet.Rendered, mapping: StatefulMapping, storePath: String, now: Int64
    ) throws(RulesStoreError) -> StoredRulesCheck {
        let store = try RulesStore(path: storePath, readOnly: true)
        return try check(rendered, mapping: mapping, state: store, now: now)
    }
}
