import JSON

/// The byte ranges a message's encoding occupies. Usually one; a singular message field that
/// occurs more than once on the wire is the merge of all its occurrences (protobuf's rule),
/// which is exactly reading them one after the other.
struct ProtoSpans {
    var first: Range<Int>
    var more: [Range<Int>] = []
}

/// What has been read of one field while its message is read.
enum ProtoSlot {
    case absent
    case value(JSONValue)
    case list([JSONValue])
    /// A singular message, decoded once its message has been read to the end (so that all its
    /// occurrences merge).
    case message(ProtoSpans)
    case map(ProtoMapBuilder)
}

/// Decodes the Protobuf binary encoding into ``JSON/JSONValue`` by a ``ProtoTypeTable``,
/// straight from the record's buffer.
///
/// - Objects have the fields' `.proto` names (snake_case as declared, not the JSON mapping's
///   lowerCamelCase), in declaration order.
/// - A field absent from the wire: repeated → `[]`, map → `{}`; a proto3 singular scalar or
///   enum outside any oneof → its default (0, "", false, "" for bytes, the first enum symbol),
///   as the app's generated code would read it; anything else (proto3 `optional`, oneof
///   members, messages, every proto2 and editions field) is left out.
/// - A singular scalar repeated on the wire: the last wins; a singular message: the occurrences
///   merge. Of a oneof, only the member set last appears.
/// - Fields outside `keeping` are skipped without building their values, but their wire type
///   is still checked, and a string's UTF-8, so a record decodes or fails the same whatever is
///   kept; a skipped message or map is not opened. Repeated fields
///   on a kept path are kept whole; a map keeps only the keys the paths name.
struct ProtoMessageDecoder {
    let bytes: UnsafeBufferPointer<UInt8>
    let types: ProtoTypeTable

    /// The deepest nesting of messages decoded (the top message is level 1).
    static let maxDepth = 64

    /// `paths`: what to keep; nil keeps everything (cheaper to pass around than a whole set).
    func message(_ index: Int, spans: ProtoSpans, keeping paths: JSONPathSet?, depth: Int) throws(DecodeFailure) -> JSONValue {
        guard depth <= Self.maxDepth else {
            throw DecodeFailure("messages nested deeper than \(Self.maxDepth)", at: spans.first.lowerBound)
        }
        let plan = types.messages[index]
        if let wellKnown = plan.wellKnown { return try decodeWellKnown(wellKnown, plan, spans, depth: depth) }
        return try fields(of: plan, spans, keeping: paths, depth: depth)
    }

    /// The message as an object of its fields, whatever its type.
    func fields(of plan: ProtoMessagePlan, _ spans: ProtoSpans, keeping paths: JSONPathSet?, depth: Int) throws(DecodeFailure) -> JSONValue {
        // The slots live on the stack for the usual message sizes (no allocation).
        try withUnsafeTemporaryAllocation(of: ProtoSlot.self, capacity: plan.fields.count) {
            (slots) throws(DecodeFailure) -> JSONValue in
            slots.initialize(repeating: .absent)
            defer { slots.deinitialize() }
            return try fields(of: plan, spans, keeping: paths, depth: depth, slots: slots)
        }
    }

    private func fields(
        of plan: ProtoMessagePlan, _ spans: ProtoSpans, keeping paths: JSONPathSet?, depth: Int, slots: UnsafeMutableBufferPointer<ProtoSlot>
    ) throws(DecodeFailure) -> JSONValue {
        guard let paths else { return try fields(of: plan, spans, keeping: nil, depth: depth, slots: slots, kept: nil) }
        // What to keep of each field (nil: skip it), on the stack like the slots.
        return try withUnsafeTemporaryAllocation(of: JSONPathSet?.self, capacity: plan.fields.count) {
            (kept) throws(DecodeFailure) -> JSONValue in
            kept.initialize(repeating: nil)
            defer { kept.deinitialize() }
            for member in paths.members {
                if let i = plan.nameBytes.firstIndex(of: member.name) { kept[i] = member.paths }
            }
            return try fields(of: plan, spans, keeping: paths, depth: depth, slots: slots, kept: kept)
        }
    }

    /// `kept`: what to keep of each field (nil: skip it); nil when everything is kept.
    private func fields(
        of plan: ProtoMessagePlan, _ spans: ProtoSpans, keeping paths: JSONPathSet?, depth: Int, slots: UnsafeMutableBufferPointer<ProtoSlot>,
        kept: UnsafeMutableBufferPointer<JSONPathSet?>?
    ) throws(DecodeFailure) -> JSONValue {
        let fields = plan.fields
        try read(spans.first, plan, slots, kept, depth: depth)
        for range in spans.more { try read(range, plan, slots, kept, depth: depth) }

        var members: [(key: String, value: JSONValue)] = []
        members.reserveCapacity(paths?.members.count ?? fields.count)
        for i in fields.indices {
            var keep: JSONPathSet?
            if let kept {
                guard let some = kept[i] else { continue }
                keep = some.whole ? nil : some
            }
            let field = fields[i]
            let name = plan.names[i]
            switch slots[i] {
            case .value(let value): members.append((name, value))
            case .list(let list): members.append((name, .array(list)))
            case .map(let map): members.append((name, .object(map.members)))
            case .message(let spans):
                do {
                    members.append((name, try message(field.target, spans: spans, keeping: keep, depth: depth + 1)))
                } catch {
                    throw error.within(name)
                }
            case .absent:
                switch field.shape {
                case .repeated: members.append((name, .array([])))
                case .map: members.append((name, .object([])))
                case .single: if field.defaultsWhenAbsent { members.append((name, defaultValue(field.kind, field.target))) }
                }
            }
        }
        return .object(members)
    }

    /// Reads the fields in `range` into `slots`.
    private func read(
        _ range: Range<Int>, _ plan: ProtoMessagePlan, _ slots: UnsafeMutableBufferPointer<ProtoSlot>,
        _ kept: UnsafeMutableBufferPointer<JSONPathSet?>?,
        depth: Int
    ) throws(DecodeFailure) {
        var reader = ProtoWireReader(bytes, from: range.lowerBound, to: range.upperBound)
        while !reader.atEnd {
            let tagStart = reader.index
            let (number, wireType) = try reader.tag()
            guard let i = plan.fieldIndex(number: number) else {
                try reader.skip(wireType: wireType, number: number, at: tagStart)
                continue
            }
            let field = plan.fields[i]
            if field.oneof >= 0 {
                for other in plan.oneofMembers[field.oneof] where other != i { slots[other] = .absent }
            }
            do {
                guard let kept else {
                    try readField(field, wireType, tagStart, &reader, &slots[i], keeping: nil, depth: depth)
                    continue
                }
                if let paths = kept[i] {
                    try readField(field, wireType, tagStart, &reader, &slots[i], keeping: paths.whole ? nil : paths, depth: depth)
                } else {
                    try skipField(field, wireType, tagStart, &reader)
                }
            } catch {
                throw error.within(plan.names[i])
            }
        }
    }

    private func readField(
        _ field: ProtoFieldPlan, _ wireType: UInt8, _ tagStart: Int, _ reader: inout ProtoWireReader, _ slot: inout ProtoSlot,
        keeping paths: JSONPathSet?, depth: Int
    ) throws(DecodeFailure) {
        guard field.kind != .group else { throw DecodeFailure("groups are not supported", at: tagStart) }
        switch field.shape {
        case .single:
            guard wireType == Self.wireType(of: field.kind) else { throw wrongWireType(wireType, field, tagStart) }
            if field.kind == .message {
                let range = try reader.lengthDelimited()
                if case .message(var spans) = slot {
                    slot = .absent
                    spans.more.append(range)
                    slot = .message(spans)
                } else {
                    slot = .message(ProtoSpans(first: range))
                }
            } else {
                slot = .value(try scalar(field.kind, field.target, &reader))
            }
        case .repeated:
            var list: [JSONValue] = []
            if case .list(let existing) = slot { list = existing }
            slot = .absent
            try readElements(field, wireType, tagStart, &reader, into: &list, depth: depth)
            slot = .list(list)
        case .map(let key, let value, let valueTarget):
            guard wireType == ProtoWireType.lengthDelimited else { throw wrongWireType(wireType, field, tagStart) }
            var map = ProtoMapBuilder()
            if case .map(let existing) = slot { map = existing }
            slot = .absent
            let entry = try reader.lengthDelimited()
            try readMapEntry(entry, key: key, value: value, valueTarget: valueTarget, into: &map, keeping: paths, depth: depth)
            slot = .map(map)
        }
    }

    /// One occurrence of a repeated field: a message, a scalar, or a packed run of scalars.
    private func readElements(
        _ field: ProtoFieldPlan, _ wireType: UInt8, _ tagStart: Int, _ reader: inout ProtoWireReader, into list: inout [JSONValue],
        depth: Int
    ) throws(DecodeFailure) {
        let expected = Self.wireType(of: field.kind)
        if wireType == expected, field.kind == .message {
            let range = try reader.lengthDelimited()
            do {
                list.append(try message(field.target, spans: ProtoSpans(first: range), keeping: nil, depth: depth + 1))
            } catch {
                throw error.within(String(list.count))
            }
        } else if wireType == expected {
            list.append(try scalar(field.kind, field.target, &reader))
        } else if wireType == ProtoWireType.lengthDelimited, Self.isPackable(field.kind) {
            let range = try reader.lengthDelimited()
            var packed = ProtoWireReader(bytes, from: range.lowerBound, to: range.upperBound)
            while !packed.atEnd {
                do { list.append(try scalar(field.kind, field.target, &packed)) } catch { throw error.within(String(list.count)) }
            }
        } else {
            throw wrongWireType(wireType, field, tagStart)
        }
    }

    /// Moves past a field that is not kept, checking that its wire type fits (and a string's UTF-8).
    private func skipField(_ field: ProtoFieldPlan, _ wireType: UInt8, _ tagStart: Int, _ reader: inout ProtoWireReader) throws(DecodeFailure) {
        guard field.kind != .group else { throw DecodeFailure("groups are not supported", at: tagStart) }
        let fits: Bool
        switch field.shape {
        case .single: fits = wireType == Self.wireType(of: field.kind)
        case .repeated:
            fits = wireType == Self.wireType(of: field.kind) || (wireType == ProtoWireType.lengthDelimited && Self.isPackable(field.kind))
        case .map: fits = wireType == ProtoWireType.lengthDelimited
        }
        guard fits else { throw wrongWireType(wireType, field, tagStart) }
        // Checked as a kept string is: whether a record decodes must not hang on what mappings read.
        if field.kind == .string { return try reader.checkString(reader.lengthDelimited()) }
        try reader.skip(wireType: wireType, number: UInt64(field.number), at: tagStart)
    }

    /// The caller adds the field's name to the path.
    func wrongWireType(_ wireType: UInt8, _ field: ProtoFieldPlan, _ at: Int) -> DecodeFailure {
        DecodeFailure("wire type \(wireType) does not fit the field's type (\(field.kind))", at: at)
    }
}
