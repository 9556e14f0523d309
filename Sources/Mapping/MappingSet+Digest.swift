import Dates

// A digest window's push (docs/mapping.md, *Digests*): rendered at the window's end from its
// last counted event, with the mapping's own keys for one event or `many`'s for two or more.
// Devices, mutes and quiet hours are judged then, as for any push.
extension MappingSet {
    /// The mappings with `digest` (docs/mapping.md, *Digests*).
    public var digesting: [EventMapping] { allMappings.filter { $0.digest != nil } }

    /// What a window's close sends.
    public enum DigestRendering: Sendable, Equatable {
        /// Its one counted event, as the mapping sends an event.
        case single
        /// Two or more: `many`, with what the window gathered.
        case many(DigestSummary)
    }

    /// Renders the push of a digest window from `record`, its last counted event.
    public func renderDigest(
        _ record: EventRecord, _ rendering: DigestRendering, schema: WriterSchema? = nil, now: Int64? = nil,
        clock: any WallClock = SystemWallClock(), users lookup: UserLookup?
    ) -> Result<Rendered, MappingFailure> {
        var event: DecodedEvent
        switch eventFormat.decode(record, schema: schema, fields: nil) {
        case .success(let e): event = e
        case .failure(let f): return .failure(f)
        }
        guard let mapping = mappings[event.type], let digest = mapping.digest else { return .failure(.unknownEventType(event.type)) }
        let chosen: EventMapping
        switch rendering {
        case .single: chosen = mapping
        case .many(let summary):
            event.digest = summary
            chosen = digest.many
        }
        // The window's end is the send: an event's `max_age` counts to it, as for any event sent late.
        return render(event, record: record, chosen: chosen, now: now, clock: clock, check: .enforce, lookup: lookup)
    }
}
