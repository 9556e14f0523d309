/// All loaded mappings: event in, FCM messages out. Pure: no I/O.
///
/// ```swift
/// let set = try MappingSet.load(files: [("welcome.yaml", yamlText)])
/// switch set.render(EventRecord(value: bytes)) { ... }
/// ```
public struct MappingSet: Sendable {
    public let mappings: [String: EventMapping]
    public let eventFormat: EventFormat
    /// The compiled templates by event type, looked up per event without copying a mapping.
    let templates: [String: MessageTemplate]
    /// The parts of an event the mappings read; decoding builds only these.
    let fields: EventFields
    /// What loaded but is likely a mistake (e.g. a collapse key per event), file:line each.
    public let warnings: [MappingLoadError]

    /// Loads mapping files given as (path, contents). Every error in every file is reported.
    /// - Throws: ``MappingLoadErrors``; nothing is loaded unless everything is valid.
    public static func load(files: [(path: String, contents: String)]) throws(MappingLoadErrors) -> MappingSet {
        var loader = MappingLoader()
        for (path, contents) in files { loader.load(file: path, contents: contents) }
        guard loader.errors.isEmpty else { throw MappingLoadErrors(errors: loader.errors) }
        let compiled = loader.mappings.map { m in
            var m = m
            m.template = m.compileTemplate()
            return m
        }
        let format = loader.format ?? EventFormat()
        return MappingSet(
            mappings: Dictionary(uniqueKeysWithValues: compiled.map { ($0.eventType, $0) }),
            eventFormat: format,
            templates: Dictionary(uniqueKeysWithValues: compiled.compactMap { m in m.template.map { (m.eventType, $0) } }),
            fields: EventFields(format: format, mappings: compiled),
            warnings: loader.warnings(format: format))
    }

    /// The outcome for one Kafka record.
    public struct Rendered: Sendable {
        public var event: DecodedEvent
        public var messages: [FCMMessage]
    }

    /// Decodes the record, finds its mapping, and renders its messages, or says why it cannot.
    ///
    /// - Parameter now: the time of sending, in seconds since the Unix epoch (a TTL becomes an
    ///   absolute `apns-expiration`); nil, the clock's, read only for a mapping with a TTL.
    public func render(_ record: EventRecord, now: Int64? = nil) -> Result<Rendered, MappingFailure> {
        let event: DecodedEvent
        switch eventFormat.decode(record, fields: fields) {
        case .success(let e): event = e
        case .failure(let f): return .failure(f)
        }
        if let template = templates[event.type], let messages = try? template.render(event, now: now) {
            return .success(Rendered(event: event, messages: messages))
        }
        // No template, or a failure, which the tree path names.
        guard let mapping = mappings[event.type] else { return .failure(.unknownEventType(event.type)) }
        return mapping.render(event, now: now).map { Rendered(event: event, messages: $0) }
    }

    /// The event types that have a mapping, sorted.
    public var eventTypes: [String] { mappings.keys.sorted() }
}
