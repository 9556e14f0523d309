import JSON

/// A map field's entries as they are read: in first-seen order, a repeated key replacing its
/// value (the last wins, as protobuf's parsers do).
struct ProtoMapBuilder {
    private(set) var members: [(key: String, value: JSONValue)] = []
    /// Key → position, built only once the map is too large to search.
    private var positions: [String: Int] = [:]
    private static let searchLimit = 16

    mutating func set(_ key: String, _ value: JSONValue) {
        if members.count <= Self.searchLimit {
            if let i = members.firstIndex(where: { $0.key == key }) {
                members[i].value = value
                return
            }
            if members.count == Self.searchLimit {
                for (i, member) in members.enumerated() { positions[member.key] = i }
            }
        } else if let i = positions[key] {
            members[i].value = value
            return
        }
        if members.count >= Self.searchLimit { positions[key] = members.count }
        members.append((key, value))
    }
}

extension ProtoMessageDecoder {
    /// One map entry (a message with `key` = 1 and `value` = 2). A key or value missing from the
    /// entry is its type's default (an empty message for a message value). Keys become strings:
    /// integers in decimal, bools "true"/"false". Only keys that `paths` name are kept (all when
    /// it is whole), each with what the paths keep below it.
    func readMapEntry(
        _ range: Range<Int>, key keyKind: ProtoField.Kind, value valueKind: ProtoField.Kind, valueTarget: Int,
        into map: inout ProtoMapBuilder, keeping paths: JSONPathSet?, depth: Int
    ) throws(DecodeFailure) {
        var reader = ProtoWireReader(bytes, from: range.lowerBound, to: range.upperBound)
        var key: JSONValue?
        var value: JSONValue?
        var valueSpans: ProtoSpans?
        let valueWireType = Self.wireType(of: valueKind)
        while !reader.atEnd {
            let tagStart = reader.index
            let (number, wireType) = try reader.tag()
            switch number {
            case 1:
                guard wireType == Self.wireType(of: keyKind) else {
                    throw DecodeFailure("wire type \(wireType) does not fit the map key (\(keyKind))", at: tagStart)
                }
                key = try scalar(keyKind, -1, &reader)
            case 2:
                guard valueKind != .group else { throw DecodeFailure("groups are not supported", at: tagStart) }
                guard wireType == valueWireType else {
                    throw DecodeFailure("wire type \(wireType) does not fit the map value (\(valueKind))", at: tagStart)
                }
                if valueKind == .message {
                    let span = try reader.lengthDelimited()
                    if valueSpans == nil { valueSpans = ProtoSpans(first: span) } else { valueSpans?.more.append(span) }
                } else {
                    value = try scalar(valueKind, valueTarget, &reader)
                }
            default: try reader.skip(wireType: wireType, number: number, at: tagStart)
            }
        }
        let keyText = Self.keyText(key ?? defaultValue(keyKind, -1))
        var valuePaths: JSONPathSet?
        if let paths {
            let keyBytes = Array(keyText.utf8)
            guard let member = paths.members.first(where: { $0.name == keyBytes }) else { return }
            valuePaths = member.paths.whole ? nil : member.paths
        }
        if valueKind == .message {
            // An entry without its value holds the empty message.
            let spans = valueSpans ?? ProtoSpans(first: range.upperBound..<range.upperBound)
            do {
                value = try message(valueTarget, spans: spans, keeping: valuePaths, depth: depth + 1)
            } catch {
                throw error.within(keyText)
            }
        }
        map.set(keyText, value ?? defaultValue(valueKind, valueTarget))
    }

    static func keyText(_ key: JSONValue) -> String {
        switch key {
        case .int(let n): String(n)
        case .bigInteger(let text): text
        case .bool(let b): b ? "true" : "false"
        case .string(let s): s
        default: ""
        }
    }
}
