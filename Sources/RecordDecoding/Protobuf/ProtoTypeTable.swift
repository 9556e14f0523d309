import JSON

/// A schema's messages and enums with every type name resolved to an index, so decoding looks
/// nothing up by name: one table for the schema file and everything it imports.
final class ProtoTypeTable: Sendable {
    let messages: [ProtoMessagePlan]
    let enums: [ProtoEnumPlan]
    /// The schema file's top-level messages (what the first message index counts).
    let roots: [Int]

    init(messages: [ProtoMessagePlan], enums: [ProtoEnumPlan], roots: [Int]) {
        self.messages = messages
        self.enums = enums
        self.roots = roots
    }
}

/// The messages whose JSON form is not their fields (the proto3 JSON mapping's special cases),
/// when declared in their own files (`google/protobuf/timestamp.proto`, …), which are built in.
enum ProtoWellKnown: Sendable {
    case timestamp, duration, wrapper, structObject, value, listValue, empty, fieldMask, any
    /// Confluent's `confluent.type.Decimal` (`confluent/type/decimal.proto`): its exact text.
    case confluentDecimal

    static func of(_ fullName: String) -> ProtoWellKnown? {
        switch fullName {
        case "google.protobuf.Timestamp": .timestamp
        case "google.protobuf.Duration": .duration
        case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int64Value",
            "google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
            "google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue":
            .wrapper
        case "google.protobuf.Struct": .structObject
        case "google.protobuf.Value": .value
        case "google.protobuf.ListValue": .listValue
        case "google.protobuf.Empty": .empty
        case "google.protobuf.FieldMask": .fieldMask
        case "google.protobuf.Any": .any
        case "confluent.type.Decimal": .confluentDecimal
        default: nil
        }
    }
}

/// A message's fields and how to find them. A class, so the decoder passes it around with one
/// reference count rather than one per array it holds.
final class ProtoMessagePlan: Sendable {
    let fullName: String
    /// In declaration order, which is the order of the decoded object's members.
    let fields: [ProtoFieldPlan]
    /// The fields' names, by the same index (apart from `fields`, which copies without
    /// reference counting).
    let names: [String]
    /// The names' UTF-8, to match JSON Pointer tokens without building strings.
    let nameBytes: [[UInt8]]
    /// Field number → index into `fields` + 1 (0: unknown), for numbers below its count.
    let denseLookup: [UInt16]
    /// The same for numbers too large for `denseLookup`.
    let sparseLookup: [UInt64: Int]
    /// Per oneof, the indexes of its fields (setting one clears the others).
    let oneofMembers: [[Int]]
    /// Nested message declarations, in order (what the next message index counts).
    let nested: [Int]
    let wellKnown: ProtoWellKnown?

    init(
        fullName: String, fields: [ProtoFieldPlan], names: [String], denseLookup: [UInt16], sparseLookup: [UInt64: Int],
        oneofMembers: [[Int]], nested: [Int], wellKnown: ProtoWellKnown?
    ) {
        self.fullName = fullName
        self.fields = fields
        self.names = names
        self.nameBytes = names.map { Array($0.utf8) }
        self.denseLookup = denseLookup
        self.sparseLookup = sparseLookup
        self.oneofMembers = oneofMembers
        self.nested = nested
        self.wellKnown = wellKnown
    }

    @inline(__always)
    func fieldIndex(number: UInt64) -> Int? {
        if number < UInt64(denseLookup.count) {
            let slot = Int(denseLookup[Int(number)])
            return slot == 0 ? nil : slot - 1
        }
        return sparseLookup[number]
    }
}

/// How to read one field: plain values only, so copying it costs no reference counting.
struct ProtoFieldPlan: Sendable {
    enum Shape: Sendable {
        case single
        case repeated
        /// A `map<K, V>`: `target` is the entry message; the key and value are described here.
        case map(key: ProtoField.Kind, value: ProtoField.Kind, valueTarget: Int)
    }

    let number: Int32
    let kind: ProtoField.Kind
    let shape: Shape
    /// A proto3 singular scalar or enum outside any oneof: absent means its default value.
    let defaultsWhenAbsent: Bool
    /// The message index (message, group, map entry) or enum index; -1 for scalars.
    let target: Int
    /// Index into the message's oneofs; -1 when in none.
    let oneof: Int
}

final class ProtoEnumPlan: Sendable {
    let fullName: String
    /// The symbol of each number from 0 up (the first declared, for aliases); nil for a gap.
    private let dense: [JSONValue?]
    /// Symbols of numbers outside `dense`.
    private let sparse: [Int32: JSONValue]
    /// proto3's default: the first symbol (`null` for NullValue).
    let defaultValue: JSONValue
    /// `google.protobuf.NullValue`, whose only value is JSON's null.
    let isNullValue: Bool

    init(fullName: String, values: [(name: String, number: Int32)]) {
        self.fullName = fullName
        isNullValue = fullName == "google.protobuf.NullValue"
        var dense: [JSONValue?] = []
        var sparse: [Int32: JSONValue] = [:]
        for value in values {
            if value.number >= 0, value.number < 256 {
                let i = Int(value.number)
                if dense.count <= i { dense += [JSONValue?](repeating: nil, count: i + 1 - dense.count) }
                if dense[i] == nil { dense[i] = .string(value.name) }
            } else if sparse[value.number] == nil {
                sparse[value.number] = .string(value.name)
            }
        }
        self.dense = dense
        self.sparse = sparse
        defaultValue = isNullValue ? .null : values.first.map { .string($0.name) } ?? .int(0)
    }

    func value(_ number: Int32) -> JSONValue {
        if isNullValue { return .null }
        if number >= 0, Int(number) < dense.count, let symbol = dense[Int(number)] { return symbol }
        return sparse[number] ?? .int(Int64(number))
    }
}
