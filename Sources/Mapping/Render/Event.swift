import JSON
import RecordDecoding

/// A Kafka record as the mapping core sees it: bytes, headers and where it came from.
public struct EventRecord: Sendable {
    public var value: [UInt8]
    public var headers: [(name: String, value: [UInt8]?)]
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    /// The record's timestamp, in milliseconds since the Unix epoch: how old the event is when
    /// its mapping has a `max_age` and no `occurred_at`.
    public var timestamp: Int64?

    public init(
        value: [UInt8], headers: [(name: String, value: [UInt8]?)] = [], topic: String = "events", partition: Int32 = 0, offset: Int64 = 0,
        timestamp: Int64? = nil
    ) {
        self.value = value
        self.headers = headers
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.timestamp = timestamp
    }

    func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value.map { String(decoding: $0, as: UTF8.self) }
    }
}

/// A decoded event: its type, ID, and the data that field pointers resolve against.
public struct DecodedEvent: Sendable {
    public enum Format: String, Sendable {
        case json
        /// `application/cloudevents+json`: attributes and `data` in one JSON document.
        case cloudEventsStructured
        /// Kafka binary mode: attributes in `ce_*` headers, the value is the data.
        case cloudEventsBinary
        /// A Schema Registry record: decoded with its writer schema (Avro, Protobuf, or JSON
        /// Schema's JSON).
        case schemaRegistry
    }

    public var type: String
    public var id: String
    /// Field pointers resolve against this: the whole document for plain JSON, `data` for
    /// CloudEvents. So one mapping serves all three encodings. From ``MappingSet/render(_:)``
    /// it holds only the fields some mapping reads.
    public var data: JSONValue
    public var format: Format
    /// What a digest window gathered, when its push is rendered (``Digest``).
    public var digest: DigestSummary? = nil
}

/// How plain JSON events name their type and ID (CloudEvents have both built in).
public struct EventFormat: Sendable, Equatable {
    /// Default `/type`.
    public var typePointer: JSONPointer
    /// If nil, plain events are identified by their Kafka coordinates (`topic/partition/offset`).
    public var idPointer: JSONPointer?
    /// Schema Registry records are typed by their record's full name (`acme.orders.OrderShipped`)
    /// unless the mapping files set `event.type`, which then applies to them too.
    public var typesSchemaRecordsByName: Bool

    public init(typePointer: JSONPointer? = nil, idPointer: JSONPointer? = nil) {
        self.typePointer = typePointer ?? JSONPointer("/type")!
        self.idPointer = idPointer
        self.typesSchemaRecordsByName = typePointer == nil
    }

    public func decode(_ record: EventRecord) -> Result<DecodedEvent, MappingFailure> {
        decode(record, fields: nil)
    }

    /// Decodes a Schema Registry record with its writer `schema`.
    public func decode(_ record: EventRecord, schema: WriterSchema) -> Result<DecodedEvent, MappingFailure> {
        decode(record, schema: schema, fields: nil)
    }

    /// Decodes building only `fields` (all of the event if nil); the rest is checked, not kept.
    /// `schema`: the writer schema of a Schema Registry record; nil for JSON and CloudEvents.
    func decode(_ record: EventRecord, schema: WriterSchema? = nil, fields: EventFields?) -> Result<DecodedEvent, MappingFailure> {
        // The fallback ID, built only when an event has none of its own.
        var coordinates: String { "\(record.topic)/\(record.partition)/\(record.offset)" }
        if let schema {
            guard let frame = ConfluentFrame(record.value) else { return .failure(.undecodable("no Schema Registry frame")) }
            let value: JSONValue
            let recordName: String?
            do {
                (value, recordName) = try schema.decode(record.value, frame: frame, keeping: fields?.document ?? .all)
            } catch {
                return .failure(.undecodable("schema \(frame.schemaID): \(error.description)"))
            }
            return event(value, format: .schemaRegistry, named: typesSchemaRecordsByName ? recordName : nil, coordinates: coordinates)
        }
        // Binary mode: the type is a header; the value is the data.
        if let type = record.header("ce_type") {
            let data: JSONValue
            do {
                data = record.value.isEmpty ? .null : try JSONParser.parse(record.value, keeping: fields?.data ?? .all)
            } catch {
                return .failure(.invalidJSON(error.description))
            }
            return .success(DecodedEvent(type: type, id: record.header("ce_id") ?? coordinates, data: data, format: .cloudEventsBinary))
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(record.value, keeping: fields?.document ?? .all)
        } catch {
            return .failure(.invalidJSON(error.description))
        }
        let contentType = record.header("content-type") ?? ""
        if contentType.hasPrefix("application/cloudevents+json") || document["specversion"] != nil {
            guard case .string(let type)? = document["type"] else { return .failure(.missingEventType("/type")) }
            let id = document["id"].flatMap(Stringify.scalar) ?? coordinates
            if document["data_base64"] != nil && document["data"] == nil {
                return .failure(.wrongType(field: "/data_base64", expected: "JSON data under \"data\"", found: "base64 data"))
            }
            return .success(DecodedEvent(type: type, id: id, data: document["data"] ?? .null, format: .cloudEventsStructured))
        }
        return event(document, format: .json, coordinates: coordinates)
    }

    /// `document` as an event of type `named`, else the type pointer's, identified by the ID
    /// pointer: plain JSON and Schema Registry records.
    private func event(
        _ document: JSONValue, format: DecodedEvent.Format, named: String? = nil, coordinates: @autoclosure () -> String
    ) -> Result<DecodedEvent, MappingFailure> {
        let type: String
        if let named {
            type = named
        } else {
            guard let typeValue = typePointer.resolve(in: document) else { return .failure(.missingEventType(typePointer.description)) }
            guard case .string(let pointed) = typeValue else {
                return .failure(.wrongType(field: typePointer.description, expected: "string", found: typeValue.typeName))
            }
            type = pointed
        }
        let id = idPointer.flatMap { $0.resolve(in: document) }.flatMap(Stringify.scalar) ?? coordinates()
        return .success(DecodedEvent(type: type, id: id, data: document, format: format))
    }
}
