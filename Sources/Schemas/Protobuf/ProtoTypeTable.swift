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

/// The messages whose JSON form is not their fields (the proto3 JSON mapping's special cases).
enum ProtoWellKnown: Sendable {
    case timestamp, duration, wrapper, structObject, value, listValue, empty, fieldMask, any

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
        default: nil
        }
    }
}

struct ProtoMessagePlan: Sendable {
    let fullName: String
    /// In declaration order, which is the order of the decoded object's members.
    let fields: [ProtoFieldPlan]
    /// Field number → index into `fields` + 1 (0: unknown), for numbers below its count.
    let denseLookup: [UInt16]
    /// The same for numbers too large for `denseLookup`.
    let sparseLookup: [UInt64: Int]
    /// Per oneof, the indexes of its fields (setting one clears the others).
    let oneofMembers: [[Int]]
    /// Nested message declarations, in order (what the next message index counts).
    let nested: [Int]
    let wellKnown: ProtoWellKnown?

    func fieldIndex(number: UInt64) -> Int? {
        if number < UInt64(denseLookup.count) {
            let slot = Int(denseLookup[Int(number)])
            return slot == 0 ? nil : slot - 1
        }
        return sparseLookup[number]
    }
}

struct ProtoFieldPlan: Sendable {
    enum Shape: Sendable {
        case single
        case repeated
        /// A `map<K, V>`: `target` is the entry message; the key and value are described here.
        case map(key: ProtoField.Kind, value: ProtoField.Kind, valueTarget: Int)
    }

    let name: String
    /// The name's UTF-8, to match JSON Pointer tokens without building strings.
    let nameBytes: [UInt8]
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

struct ProtoEnumPlan: Sendable {
    let fullName: String
    /// The first symbol declared for each number (aliases share a number).
    let symbols: [Int32: String]
    /// proto3's default: the first symbol.
    let defaultValue: JSONValue
    /// `google.protobuf.NullValue`, whose only value is JSON's null.
    let isNullValue: Bool

    func value(_ number: Int32) -> JSONValue {
        if isNullValue { return .null }
        if let name = symbols[number] { return .string(name) }
        return .int(Int64(number))
    }
}
