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
        let frame: ConfluentFrame
        let source: any SchemaSource
        let format: ValueFormat
        switch need(of: record) {
        case .known(let known): return known
        case .lookup(let f, let s, let v): (frame, source, format) = (f, s, v)
        }
        do {
            return judged(.success(try await source.schema(id: frame.schemaID)), format: format, topic: record.topic)
        } catch {
            return judged(.failure(error), format: format, topic: record.topic)
        }
    }

    /// What ``writerSchema(of:)`` would return, if that needs no wait (a JSON record, a schema
    /// the registry client holds); nil otherwise.
    public func writerSchemaAtHand(of record: EventRecord) -> Result<WriterSchema?, Failure>? {
        switch need(of: record) {
        case .known(let known): return known
        case .lookup(let frame, let source, let format):
            guard let held = source.cachedSchema(id: frame.schemaID) else { return nil }
            return judged(held, format: format, topic: record.topic)
        }
    }

    private enum Need {
        case known(Result<WriterSchema?, Failure>)
        case lookup(ConfluentFrame, any SchemaSource, ValueFormat)
    }

    /// Whether `record` needs a writer schema from the registry, and which.
    private func need(of record: EventRecord) -> Need {
        let format = valueFormats[record.topic] ?? .auto
        switch format.encoding(of: record.value, topic: record.topic) {
        case .success(.json): return .known(.success(nil))
        case .success(.schemaRegistry(let frame)):
            guard let source else {
                return .known(
                    .failure(
                        .failed(
                            .wrongValueFormat(
                                "a Schema Registry record (magic byte 0, schema ID \(frame.schemaID)), and no schema_registry.url is configured"
                            ))))
            }
            return .lookup(frame, source, format)
        case .failure(let failure): return .known(.failure(.failed(failure)))
        }
    }

    /// The registry's answer for a record of `topic`, read as `format`, as the processor needs it.
    private func judged(
        _ answer: Result<WriterSchema, SchemaLookupError>, format: ValueFormat, topic: String
    ) -> Result<WriterSchema?, Failure> {
        switch answer {
        case .success(let schema):
            if let wrong = format.admits(schema.kind, topic: topic) { return .failure(.failed(wrong)) }
            return .success(schema)
        case .failure(.notFound(let id)): return .failure(.failed(.unknownSchema(id: id)))
        case .failure(.invalid(let id, let why)): return .failure(.failed(.invalidSchema(id: id, reason: why.description)))
        case .failure(.cancelled): return .failure(.cancelled)
        }
    }
}
