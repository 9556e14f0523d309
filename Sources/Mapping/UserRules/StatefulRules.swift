/// A mapping's `cap` and `dedup` (docs/rules.md; docs/design/per-user-rules.md §3): the rules
/// whose state the consumer group shares (docs/rules-state.md). Loaded and checked; a worker
/// applies them only with the rules engine (``MappingSet/load(files:statefulRules:)``).
public struct StatefulRules: Sendable, Equatable {
    /// `cap: {max, per, by, over}`: at most `max` notifications FCM acknowledged (or may have
    /// delivered) per sliding `per` per key `by`.
    public struct Cap: Sendable, Equatable {
        public enum Dimension: String, Sendable, Equatable, CaseIterable {
            case user, category, mapping, device
        }

        /// What becomes of a push over the cap.
        public enum Over: String, Sendable, Equatable {
            /// Withheld and counted (`pushbridge_pushes_withheld_total{rule="cap"}`).
            case skip
            /// Written to the dead-letter topic, reason `capped`.
            case deadLetter = "dead-letter"
        }

        public var max: Int
        /// The sliding window, in seconds.
        public var per: Int
        /// The key's dimensions, in the order written (no repeats).
        public var by: [Dimension]
        public var over: Over

        public init(max: Int, per: Int, by: [Dimension], over: Over = .skip) {
            self.max = max
            self.per = per
            self.by = by
            self.over = over
        }
    }

    public var cap: Cap?
    /// `dedup`: how long (seconds) a device push FCM acknowledged keeps the same push (event
    /// ID, mapping, target) from going again; nil: no dedup.
    public var dedupWindow: Int?

    public init(cap: Cap? = nil, dedupWindow: Int? = nil) {
        self.cap = cap
        self.dedupWindow = dedupWindow
    }

    public var isEmpty: Bool { cap == nil && dedupWindow == nil }

    /// How long (seconds) an acknowledged push keeps the same push from going again: the longer
    /// of `dedup` and the cap's `per`, since a cap implies dedup over its window (a re-keyed
    /// event read twice is one notification, design §5.6); 0 for neither.
    public var effectiveDedupWindow: Int { Swift.max(dedupWindow ?? 0, cap?.per ?? 0) }

    /// The window `dedup: true` takes: the mapping's `max_age` (an older event is not sent
    /// anyway), else a day.
    public static func defaultDedupWindow(maxAge: Int?) -> Int { maxAge ?? 86_400 }

    /// What `cap.per` and `dedup.window` may be: a minute to 30 days.
    public static let windows = 60...2_592_000
    /// What `cap.max` may be (the sliding count is exact, and bounded).
    public static let maxima = 1...1_000
}

/// An event type's `cap` and `dedup` with the rules they count by: what the rules engine needs
/// of its mapping (``MappingSet/stateful(of:)``).
public struct StatefulMapping: Sendable, Equatable {
    public var rules: UserRules
    public var stateful: StatefulRules
    /// A digest's windows are kept by the owner of the user's state partition too.
    public var digest: Digest?

    public init(rules: UserRules, stateful: StatefulRules, digest: Digest? = nil) {
        self.rules = rules
        self.stateful = stateful
        self.digest = digest
    }
}
