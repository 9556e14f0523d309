import JSON
import Kafka
import W3CTraceContext

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where an event's W3C trace context comes from (W3C Trace Context, https://www.w3.org/TR/trace-context/):
///
/// - `traceparent` and `tracestate` Kafka headers, as OpenTelemetry's Kafka instrumentations
///   write them;
/// - CloudEvents in Kafka binary mode: the distributed-tracing extension's attributes as
///   `ce_traceparent` and `ce_tracestate` headers (CloudEvents Kafka protocol binding, 3.2.3:
///   attributes are headers prefixed `ce_`; distributed tracing extension:
///   https://github.com/cloudevents/spec/blob/main/cloudevents/extensions/distributed-tracing.md);
/// - CloudEvents in structured mode: the `traceparent` and `tracestate` attributes of the JSON
///   document (``structured(_:)``).
///
/// A header wins over a structured attribute; a value that is not a valid `traceparent` is
/// ignored (a new trace starts), as the W3C recommendation says a receiver does.
public enum TraceHeaders {
    public static let traceParent = "traceparent"
    public static let traceState = "tracestate"
    static let cloudEventsTraceParent = "ce_traceparent"
    static let cloudEventsTraceState = "ce_tracestate"

    /// The trace context in `headers`, if any: the record's own, else CloudEvents binary mode's.
    public static func context(in headers: [KafkaHeader]) -> TraceContext? {
        guard !headers.isEmpty else { return nil }
        var parent: [UInt8]?
        var state: [UInt8]?
        var cloudParent: [UInt8]?
        var cloudState: [UInt8]?
        for header in headers {
            // Lengths first: most headers are neither, and this runs for every traced event.
            switch header.name.utf8.count {
            case 10 where header.name == traceState: state = header.value
            case 11 where header.name == traceParent: parent = header.value
            case 13 where header.name == cloudEventsTraceState: cloudState = header.value
            case 14 where header.name == cloudEventsTraceParent: cloudParent = header.value
            default: continue
            }
        }
        if let parent { return context(parent: parent, state: state) }
        if let cloudParent { return context(parent: cloudParent, state: cloudState) }
        return nil
    }

    /// The `traceparent` value an event came with, as written (for records that copy it): the
    /// header, else CloudEvents' `ce_traceparent`.
    public static func traceParentValue(in headers: [KafkaHeader]) -> String? {
        let value = headers.first { $0.name == traceParent }?.value ?? headers.first { $0.name == cloudEventsTraceParent }?.value
        return value.map { String(decoding: $0, as: UTF8.self) }
    }

    /// A structured CloudEvent's `traceparent` and `tracestate` attributes, read from `value`
    /// keeping nothing else (a JSON object with `specversion`); nil for anything else.
    /// A record without the bytes `"traceparent"` is not parsed: most records are not structured
    /// CloudEvents with the attribute, and a scan costs less than a parse.
    public static func structured(_ value: [UInt8]) -> (parent: String, state: String?)? {
        guard value.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) == UInt8(ascii: "{"),
            contains(value, quotedTraceParent),
            let document = try? JSONParser.parse(value, keeping: structuredAttributes),
            document["specversion"] != nil, let parent = document["traceparent"]?.stringValue
        else { return nil }
        return (parent, document["tracestate"]?.stringValue)
    }

    private static let quotedTraceParent = Array(#""traceparent""#.utf8)

    /// Whether `needle` occurs in `haystack`: memchr to each candidate first byte, memcmp there.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        haystack.withUnsafeBufferPointer { h in
            needle.withUnsafeBufferPointer { n in
                guard let first = n.first, h.count >= n.count, let start = h.baseAddress, let wanted = n.baseAddress else { return false }
                let end = start + (h.count - n.count + 1)
                var at = start
                while at < end, let found = memchr(at, Int32(first), end - at) {
                    let candidate = found.assumingMemoryBound(to: UInt8.self)
                    if memcmp(candidate, wanted, n.count) == 0 { return true }
                    at = UnsafePointer(candidate) + 1
                }
                return false
            }
        }
    }

    private static let structuredAttributes: JSONPathSet = {
        var paths = JSONPathSet()
        for name in ["specversion", "traceparent", "tracestate"] { paths.insert([name]) }
        return paths
    }()

    static func context(parent: [UInt8]?, state: [UInt8]?) -> TraceContext? {
        guard let parent else { return nil }
        return try? TraceContext(
            traceParentHeaderValue: String(decoding: parent, as: UTF8.self), traceStateHeaderValue: state.map { String(decoding: $0, as: UTF8.self) })
    }
}
