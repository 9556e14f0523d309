import JSON

/// The well-known types as the proto3 JSON mapping writes them, so a mapping reads a
/// Timestamp as its RFC 3339 text rather than `{seconds, nanos}`:
///
/// | message | value |
/// |---|---|
/// | Timestamp | `"2026-11-24T09:30:00.123Z"` (UTC; 0, 3, 6 or 9 fraction digits) |
/// | Duration | `"1.500s"` (the same fraction digits; `-` when negative) |
/// | DoubleValue … BytesValue | the wrapped value (an absent wrapper field stays missing) |
/// | Struct / Value / ListValue | object / its JSON value / array; NullValue is `null` |
/// | Empty | `{}` |
/// | FieldMask | its paths joined with `,`, as written (not turned into lowerCamelCase) |
/// | Any | `{"@type": type_url, "value": base64 of value}` (the packed message is not decoded) |
///
/// A Value with no kind set is `null`. A Timestamp or Duration outside the range the mapping
/// allows (years 1 to 9999; ±10,000 years; nanos within a second, of the seconds' sign) is a
/// SchemaError.
extension ProtoMessageDecoder {
    func decodeWellKnown(_ kind: ProtoWellKnown, _ plan: ProtoMessagePlan, _ spans: ProtoSpans, depth: Int) throws(DecodeFailure) -> JSONValue {
        switch kind {
        case .timestamp:
            let (seconds, nanos) = try secondsAndNanos(spans)
            guard let text = ProtoTime.timestamp(seconds: seconds, nanos: nanos) else {
                throw DecodeFailure("Timestamp (seconds \(seconds), nanos \(nanos)) is out of range", at: spans.first.lowerBound)
            }
            return .string(text)
        case .duration:
            let (seconds, nanos) = try secondsAndNanos(spans)
            guard let text = ProtoTime.duration(seconds: seconds, nanos: nanos) else {
                throw DecodeFailure("Duration (seconds \(seconds), nanos \(nanos)) is out of range", at: spans.first.lowerBound)
            }
            return .string(text)
        case .wrapper: return try wrapped(plan, spans)
        case .value: return try value(plan, spans, depth: depth)
        case .structObject:
            var map = ProtoMapBuilder()
            guard case .map(.string, .message, let valueIndex)? = plan.fields.first?.shape else { return .object([]) }
            try forEachField(spans) { (number, wireType, tagStart, reader) throws(DecodeFailure) in
                guard number == 1 else { return try reader.skip(wireType: wireType, number: number, at: tagStart) }
                guard wireType == ProtoWireType.lengthDelimited else { throw wrongWireType(wireType, plan.fields[0], tagStart) }
                let entry = try reader.lengthDelimited()
                try readMapEntry(entry, key: .string, value: .message, valueTarget: valueIndex, into: &map, keeping: nil, depth: depth)
            }
            return .object(map.members)
        case .listValue:
            var list: [JSONValue] = []
            guard let first = plan.fields.first, first.kind == .message else { return .array([]) }
            let valueIndex = first.target
            try forEachField(spans) { (number, wireType, tagStart, reader) throws(DecodeFailure) in
                guard number == 1 else { return try reader.skip(wireType: wireType, number: number, at: tagStart) }
                guard wireType == ProtoWireType.lengthDelimited else { throw wrongWireType(wireType, plan.fields[0], tagStart) }
                let element = try reader.lengthDelimited()
                do throws(DecodeFailure) {
                    list.append(try message(valueIndex, spans: ProtoSpans(first: element), keeping: nil, depth: depth + 1))
                } catch {
                    throw error.within(String(list.count))
                }
            }
            return .array(list)
        case .confluentDecimal: return try decimal(spans)
        case .empty, .fieldMask, .any: break
        }
        let object = try fields(of: plan, spans, keeping: nil, depth: depth)
        switch kind {
        case .fieldMask:
            guard case .array(let paths)? = object["paths"] else { return .string("") }
            return .string(paths.compactMap(\.stringValue).joined(separator: ","))
        case .any: return .object([("@type", object["type_url"] ?? .string("")), ("value", object["value"] ?? .string(""))])
        default: return .object([])
        }
    }

    /// A wrapper's `value` (field 1): the last one on the wire, or the default when absent.
    private func wrapped(_ plan: ProtoMessagePlan, _ spans: ProtoSpans) throws(DecodeFailure) -> JSONValue {
        guard let field = plan.fields.first else { return .null }
        var result = defaultValue(field.kind, field.target)
        let expected = Self.wireType(of: field.kind)
        try forEachField(spans) { (number, wireType, tagStart, reader) throws(DecodeFailure) in
            guard number == 1 else { return try reader.skip(wireType: wireType, number: number, at: tagStart) }
            guard wireType == expected else { throw wrongWireType(wireType, field, tagStart).within("value") }
            result = try scalar(field.kind, field.target, &reader)
        }
        return result
    }

    /// A Value: whichever member of its `kind` oneof came last; `null` when none did.
    private func value(_ plan: ProtoMessagePlan, _ spans: ProtoSpans, depth: Int) throws(DecodeFailure) -> JSONValue {
        var result = JSONValue.null
        // struct_value (5) or list_value (6): decoded at the end, so repeated occurrences merge.
        var pending: (number: UInt64, spans: ProtoSpans)?
        try forEachField(spans) { (number, wireType, tagStart, reader) throws(DecodeFailure) in
            guard let i = plan.fieldIndex(number: number) else { return try reader.skip(wireType: wireType, number: number, at: tagStart) }
            let field = plan.fields[i]
            guard wireType == Self.wireType(of: field.kind) else { throw wrongWireType(wireType, field, tagStart).within(plan.names[i]) }
            if field.kind == .message {
                let range = try reader.lengthDelimited()
                if pending?.number == number { pending?.spans.more.append(range) } else { pending = (number, ProtoSpans(first: range)) }
            } else {
                pending = nil
                do throws(DecodeFailure) {
                    result = try scalar(field.kind, field.target, &reader)
                } catch {
                    throw error.within(plan.names[i])
                }
            }
        }
        guard let pending, let i = plan.fieldIndex(number: pending.number) else { return result }
        do {
            return try message(plan.fields[i].target, spans: pending.spans, keeping: nil, depth: depth + 1)
        } catch {
            throw error.within(plan.names[i])
        }
    }

    /// Calls `body` with each field's number, wire type and tag offset, the reader just past the tag.
    private func forEachField(
        _ spans: ProtoSpans, _ body: (UInt64, UInt8, Int, inout ProtoWireReader) throws(DecodeFailure) -> Void
    ) throws(DecodeFailure) {
        for i in -1..<spans.more.count {
            let range = i < 0 ? spans.first : spans.more[i]
            var reader = ProtoWireReader(bytes, from: range.lowerBound, to: range.upperBound)
            while !reader.atEnd {
                let tagStart = reader.index
                let (number, wireType) = try reader.tag()
                try body(number, wireType, tagStart, &reader)
            }
        }
    }

    /// `confluent.type.Decimal`'s exact text: `value` (bytes, 1) is the unscaled integer, `scale`
    /// (int32, 3) where the point goes; `precision` (2) bounds the value's length (none set:
    /// 1,000 digits at most).
    private func decimal(_ spans: ProtoSpans) throws(DecodeFailure) -> JSONValue {
        var raw = 0..<0
        var precision: UInt64 = 0
        var scale: Int64 = 0
        try forEachField(spans) { (number, wireType, tagStart, reader) throws(DecodeFailure) in
            switch (number, wireType) {
            case (1, ProtoWireType.lengthDelimited): raw = try reader.lengthDelimited()
            case (2, ProtoWireType.varint): precision = try reader.varint()
            case (3, ProtoWireType.varint): scale = Int64(Int32(truncatingIfNeeded: try reader.varint()))
            case (1...3, _): throw DecodeFailure("wire type \(wireType) does not fit Decimal's field \(number)", at: tagStart)
            default: try reader.skip(wireType: wireType, number: number, at: tagStart)
            }
        }
        guard (0...1_000).contains(scale), precision <= 1_000 else {
            throw DecodeFailure("Decimal's scale \(scale) or precision \(precision) is out of range", at: spans.first.lowerBound)
        }
        let digits = precision == 0 ? 1_000 : Int(precision)
        guard let text = AvroDecimal.text(UnsafeBufferPointer(rebasing: bytes[raw]), precision: max(digits, Int(scale)), scale: Int(scale))
        else { throw DecodeFailure("Decimal's value is longer than its precision \(precision) allows", at: spans.first.lowerBound) }
        return .string(text)
    }

    /// A Timestamp's or Duration's `seconds` (int64, field 1) and `nanos` (int32, field 2).
    private func secondsAndNanos(_ spans: ProtoSpans) throws(DecodeFailure) -> (Int64, Int32) {
        var seconds: Int64 = 0
        var nanos: Int32 = 0
        try forEachField(spans) { (number, wireType, tagStart, reader) throws(DecodeFailure) in
            guard number == 1 || number == 2 else { return try reader.skip(wireType: wireType, number: number, at: tagStart) }
            let name = number == 1 ? "seconds" : "nanos"
            guard wireType == ProtoWireType.varint else {
                throw DecodeFailure("wire type \(wireType) does not fit the field's type (int)", at: tagStart).within(name)
            }
            let value = try reader.varint()
            if number == 1 { seconds = Int64(bitPattern: value) } else { nanos = Int32(truncatingIfNeeded: value) }
        }
        return (seconds, nanos)
    }
}
