import Mapping

/// The writer schemas Schema Registry records need, by the topic's `kafka.value_formats`: the
/// one step before rendering that may wait (on the registry), shared by the processor, replay's
/// event-type filter and its dry run, so a record reads the same everywhere.
public struct RecordSchemas: Sendable {
    /// nil: no registry configured (Schema Registry records are dead-lettered as
    /// `wrong_value_format`).
    public var source: (any SchemaSource)?
    /// A topic not named: `auto`.
    public var valueFormats: [String: ValueFormat]

    public init(source: (any SchemaSource)? = nil, valueFormats: [String: ValueFormat] = [:]) {
        self.source = source
        self.valueFormats = valueFormats
    }

    public enum Failure: Error, Sendable {
        /// The record's own fault: dead-lettered with this reason.
        case failed(MappingFailure)
        /// The task was cancelled while the registry could not answer (the worker is stopping):
        /// the record stays unfinished.
        case cancelled
    }

    /// The writer schema `record` needs: nil for JSON and CloudEvents; for a Schema Registry
    /// record, the registry's (waiting while it cannot be reached).
    public func writerSchema(of record: EventRecord) async -> Result<WriterSchema?, Failure> {
        let format = valueFormats[record.topic] ?? .auto
        let frame: ConfluentFrame
        switch format.encoding(of: record.value, topic: record.topic) {
        case .success(.json): return .success(nil)
        case .success(.schemaRegistry(let f)): frame = f
        case .failure(let failure): return .failure(.failed(failure))
        }
        guard let source else {
            return .failure(
                .failed(
                    .wrongValueFormat(
                        "a Schema Registry record (magic byte 0, schema ID \(frame.schemaID)), and no schema_registry.url is configured")))
        }
        do {
            let schema = try await source.schema(id: frame.schemaID)
            if let wrong = format.admits(schema.kind, topic: record.topic) { return .failure(.failed(wrong)) }
            return .success(schema)
        } catch {
            switch error {
            case .notFound(let id): return .failure(.failed(.unknownSchema(id: id)))
            case .invalid(let id, let why): return .failure(.failed(.invalidSchema(id: id, reason: why.description)))
            case .cancelled: return .failure(.cancelled)
            }
        }
    }
}
