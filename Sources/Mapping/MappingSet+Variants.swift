// The event types with `variants` (docs/mapping.md, *Variants*): the variant an event takes,
// and every variant's mapping for what reads them all (lint, the projects check, `validate`).
extension MappingSet {
    /// The variants of `type`, in file order; nil for an event type without `variants`.
    public func variants(of type: String) -> VariantSet? { variantSets[type] }

    /// Every mapping `type` can send with: its pushes' (and their variants'), its variants, or
    /// its one mapping.
    public func mappings(of type: String) -> [EventMapping] {
        pushSets[type]?.pushes.flatMap(\.mappings) ?? variantSets[type]?.variants ?? mappings[type].map { [$0] } ?? []
    }

    /// The pushes of `type`, in file order; nil for an event type without `pushes`.
    public func pushes(of type: String) -> PushSet? { pushSets[type] }

    /// Every mapping of every event type, variants each on their own, sorted by file and line.
    public var allMappings: [EventMapping] {
        eventTypes.flatMap(mappings(of:)).sorted { ($0.file, $0.line) < ($1.file, $1.line) }
    }

    /// Whether some mapping applies a user's rules (`category`, `quiet_hours`): the registry must
    /// hold every user's preferences.
    public var readsPreferences: Bool { allMappings.contains { !$0.rules.isEmpty } }

    /// Whether some mapping drives a Live Activity (`activity:`).
    public var hasLiveActivities: Bool { allMappings.contains { $0.activity != nil } }

    /// The variant of `set` that `event` takes, or why none.
    func choose(_ set: VariantSet, _ event: DecodedEvent) -> Result<EventMapping, MappingFailure> {
        do throws(MappingFailure) {
            guard let mapping = try set.choose(event) else {
                // The loader requires `unmatched` when there is no default.
                return .failure(.noVariant(NoVariant(eventType: event.type, eventID: event.id, action: set.unmatched ?? .skip)))
            }
            return .success(mapping)
        } catch {
            return .failure(error)
        }
    }

    /// A `user` target's device filter; nil for other targets.
    static func userFilter(_ mapping: EventMapping) -> DeviceFilter? {
        if case .user(_, let filter) = mapping.target { filter } else { nil }
    }
}
