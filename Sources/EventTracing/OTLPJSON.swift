import JSON
import Tracing
import W3CTraceContext

/// Spans as an OTLP/HTTP JSON request body: an `ExportTraceServiceRequest`
/// (opentelemetry-proto, `opentelemetry/proto/collector/trace/v1/trace_service.proto`) in the
/// Protobuf JSON mapping with OTLP's differences (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding):
/// field names in lowerCamelCase, `traceId` and `spanId` as hex strings (not base64), enum
/// values as integers, 64-bit integers (times, int attributes) as decimal strings.
enum OTLPJSON {
    /// `SpanKind` in `trace.proto`: unspecified 0, internal 1, server 2, client 3, producer 4, consumer 5.
    static func kind(_ kind: SpanKind) -> Int64 {
        switch kind {
        case .internal: 1
        case .server: 2
        case .client: 3
        case .producer: 4
        case .consumer: 5
        }
    }

    /// `Status.StatusCode`: unset 0, ok 1, error 2.
    static func status(_ status: SpanStatus) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("code", .int(status.code == .ok ? 1 : 2))]
        if let message = status.message { members.append(("message", .string(message))) }
        return .object(members)
    }

    static func request(_ spans: [FinishedSpan], resource: [(key: String, value: String)], scope: (name: String, version: String)) -> [UInt8] {
        let resourceAttributes = JSONValue.array(resource.map { attribute($0.key, .object([("stringValue", .string($0.value))])) })
        let scopeValue = JSONValue.object([("name", .string(scope.name)), ("version", .string(scope.version))])
        let scopeSpans = JSONValue.object([("scope", scopeValue), ("spans", .array(spans.map(span)))])
        let resourceSpans = JSONValue.object([("resource", .object([("attributes", resourceAttributes)])), ("scopeSpans", .array([scopeSpans]))])
        return JSONWriter.write(.object([("resourceSpans", .array([resourceSpans]))]))
    }

    static func span(_ span: FinishedSpan) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("traceId", .string(span.traceContext.traceID.description)),
            ("spanId", .string(span.traceContext.spanID.description)),
        ]
        if let state = span.traceContext.traceStateHeaderValue { members.append(("traceState", .string(state))) }
        if let parent = span.parentSpanID { members.append(("parentSpanId", .string(parent.description))) }
        members.append(("name", .string(span.name)))
        members.append(("kind", .int(kind(span.kind))))
        members.append(("startTimeUnixNano", .string(String(span.startNanos))))
        members.append(("endTimeUnixNano", .string(String(span.endNanos))))
        members.append(("attributes", attributes(span.attributes)))
        if !span.events.isEmpty {
            members.append(
                (
                    "events",
                    .array(
                        span.events.map { event in
                            .object([
                                ("timeUnixNano", .string(String(event.nanosecondsSinceEpoch))), ("name", .string(event.name)),
                                ("attributes", attributes(event.attributes)),
                            ])
                        })
                ))
        }
        if let status = span.status { members.append(("status", Self.status(status))) }
        return .object(members)
    }

    static func attributes(_ attributes: SpanAttributes) -> JSONValue {
        var list: [(key: String, value: JSONValue)] = []
        // SpanAttributes is no Sequence: its own forEach is the way through it.
        // swift-format-ignore: ReplaceForEachWithForLoop
        attributes.forEach { name, value in list.append((name, anyValue(value))) }
        return .array(list.sorted { $0.key < $1.key }.map { attribute($0.key, $0.value) })
    }

    static func attribute(_ key: String, _ value: JSONValue) -> JSONValue {
        .object([("key", .string(key)), ("value", value)])
    }

    /// An `AnyValue`: `stringValue`, `boolValue`, `intValue` (a decimal string), `doubleValue`,
    /// `arrayValue`.
    static func anyValue(_ value: SpanAttribute) -> JSONValue {
        switch value {
        case .int32(let v): .object([("intValue", .string(String(v)))])
        case .int64(let v): .object([("intValue", .string(String(v)))])
        case .double(let v): .object([("doubleValue", .double(v))])
        case .bool(let v): .object([("boolValue", .bool(v))])
        case .string(let v): .object([("stringValue", .string(v))])
        case .int32Array(let v): .object([("arrayValue", .object([("values", .array(v.map { anyValue(.int32($0)) }))]))])
        case .int64Array(let v): .object([("arrayValue", .object([("values", .array(v.map { anyValue(.int64($0)) }))]))])
        case .doubleArray(let v): .object([("arrayValue", .object([("values", .array(v.map { anyValue(.double($0)) }))]))])
        case .boolArray(let v): .object([("arrayValue", .object([("values", .array(v.map { anyValue(.bool($0)) }))]))])
        case .stringArray(let v): .object([("arrayValue", .object([("values", .array(v.map { anyValue(.string($0)) }))]))])
        case .stringConvertible(let v): .object([("stringValue", .string(v.description))])
        case .stringConvertibleArray(let v): .object([("arrayValue", .object([("values", .array(v.map { anyValue(.string($0.description)) }))]))])
        default: .object([("stringValue", .string("\(value)"))])
        }
    }
}
