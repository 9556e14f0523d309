/// A Protobuf schema as descriptors, shaped like `google/protobuf/descriptor.proto` so that both
/// ways a registry hands a schema over land in the same model:
/// - a serialized `FileDescriptorProto` (base64; Confluent's `format=serialized`, and what
///   confluent-kafka's serializers register), read by `ProtoDescriptorReader`;
/// - `.proto` source text (what Confluent's registry returns by default), read by `ProtoTextParser`.
///
/// Type names are always fully qualified with a leading dot (`.acme.orders.Order`), as in
/// `FieldDescriptorProto.type_name`; the text parser resolves relative names to that form.
public struct ProtoFile: Sendable, Equatable {
    public enum Syntax: String, Sendable, Equatable {
        case proto2, proto3, editions
    }

    /// The import path it is known by (`acme/orders.proto`).
    public var name: String
    /// `package`, without dots at either end; empty when none.
    public var package: String
    /// Import paths, in the file's order.
    public var dependencies: [String]
    public var messages: [ProtoMessage]
    public var enums: [ProtoEnum]
    public var syntax: Syntax

    public init(
        name: String, package: String = "", dependencies: [String] = [], messages: [ProtoMessage] = [], enums: [ProtoEnum] = [],
        syntax: Syntax = .proto3
    ) {
        self.name = name
        self.package = package
        self.dependencies = dependencies
        self.messages = messages
        self.enums = enums
        self.syntax = syntax
    }
}

public struct ProtoMessage: Sendable, Equatable {
    /// The simple name (`Order`); its full name comes from the package and enclosing messages.
    public var name: String
    public var fields: [ProtoField]
    public var nestedMessages: [ProtoMessage]
    public var nestedEnums: [ProtoEnum]
    /// `oneof` names, in order; ``ProtoField/oneofIndex`` points here. Includes the synthetic
    /// oneofs proto3 `optional` fields get.
    public var oneofs: [String]
    /// A `map<K, V>` field's generated entry type (`option map_entry`): fields `key` = 1, `value` = 2.
    public var isMapEntry: Bool

    public init(
        name: String, fields: [ProtoField] = [], nestedMessages: [ProtoMessage] = [], nestedEnums: [ProtoEnum] = [],
        oneofs: [String] = [], isMapEntry: Bool = false
    ) {
        self.name = name
        self.fields = fields
        self.nestedMessages = nestedMessages
        self.nestedEnums = nestedEnums
        self.oneofs = oneofs
        self.isMapEntry = isMapEntry
    }
}

public struct ProtoField: Sendable, Equatable {
    public enum Label: Int, Sendable, Equatable {
        case optional = 1
        case required = 2
        case repeated = 3
    }

    /// `FieldDescriptorProto.Type`, with the same numbers.
    public enum Kind: Int, Sendable, Equatable {
        case double = 1
        case float = 2
        case int64 = 3
        case uint64 = 4
        case int32 = 5
        case fixed64 = 6
        case fixed32 = 7
        case bool = 8
        case string = 9
        case group = 10
        case message = 11
        case bytes = 12
        case uint32 = 13
        case `enum` = 14
        case sfixed32 = 15
        case sfixed64 = 16
        case sint32 = 17
        case sint64 = 18
    }

    public var name: String
    public var number: Int32
    public var label: Label
    public var kind: Kind
    /// For `.message`, `.enum` and `.group`: the full name with a leading dot.
    public var typeName: String?
    /// Index into the message's ``ProtoMessage/oneofs``.
    public var oneofIndex: Int?
    /// A proto3 `optional` field: absent means missing, not the default value.
    public var proto3Optional: Bool
    /// `[packed = …]` when written; nil: the syntax's default (packed in proto3, not in proto2).
    /// Decoding accepts both encodings of a repeated scalar either way, as parsers must.
    public var packed: Bool?

    public init(
        name: String, number: Int32, label: Label = .optional, kind: Kind, typeName: String? = nil, oneofIndex: Int? = nil,
        proto3Optional: Bool = false, packed: Bool? = nil
    ) {
        self.name = name
        self.number = number
        self.label = label
        self.kind = kind
        self.typeName = typeName
        self.oneofIndex = oneofIndex
        self.proto3Optional = proto3Optional
        self.packed = packed
    }
}

public struct ProtoEnum: Sendable, Equatable {
    public var name: String
    /// Symbols and their numbers, in the file's order (the first is proto3's default).
    public var values: [(name: String, number: Int32)]

    public init(name: String, values: [(name: String, number: Int32)]) {
        self.name = name
        self.values = values
    }

    public static func == (a: ProtoEnum, b: ProtoEnum) -> Bool {
        a.name == b.name && a.values.count == b.values.count && zip(a.values, b.values).allSatisfy { $0 == $1 }
    }
}
