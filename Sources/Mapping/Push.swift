/// One of several pushes an event type sends (`pushes:`, docs/mapping.md, *Several pushes per
/// event*): its own audience, keys and options, chosen per event by its `when`, if any.
public struct Push: Sendable {
    /// Unique within the event type: in `{from: push_id}`, outcome records, logs and metrics.
    public var name: String
    /// All must hold for the push to be sent; empty: always.
    public var conditions: [VariantCondition]
    public var route: Route

    public enum Route: Sendable {
        case one(EventMapping)
        /// The push's own variants.
        case variants(VariantSet)
    }

    /// Every mapping the push can send with.
    public var mappings: [EventMapping] {
        switch route {
        case .one(let m): [m]
        case .variants(let set): set.variants
        }
    }

    /// Whether `event` calls for this push.
    /// - Throws: ``MappingFailure/wrongType(field:expected:found:)`` for a compared field that
    ///   is an array or an object.
    func applies(to event: DecodedEvent) throws(MappingFailure) -> Bool {
        for condition in conditions where !(try condition.holds(in: event.data)) { return false }
        return true
    }
}

/// The pushes of one event type, in file order.
public struct PushSet: Sendable {
    public var eventType: String
    public var pushes: [Push]

    /// `order.paid: pushes buyer, seller (when /seller/notify = "true")`: what `validate` lists.
    public var summary: String {
        let list = pushes.map { push in
            push.conditions.isEmpty ? push.name : "\(push.name) (when \(push.conditions.map(\.description).joined(separator: " and ")))"
        }
        return "\(eventType): pushes " + list.joined(separator: ", ")
    }
}
