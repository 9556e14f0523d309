/// The rest of the `google/protobuf/*.proto` files Confluent's Schema Registry builds in, which
/// describe APIs and types: `api.proto` (Api, Method, Mixin), `type.proto` (Type, Field, Enum,
/// EnumValue, Option; the Syntax enum) and `source_context.proto` (SourceContext). Serializers
/// never register them (confluent-kafka's `_is_builtin` skips all of `google/protobuf/`).
///
/// Written from protobuf's own files: names, numbers, types, messages and enums in each file's
/// order, so message indexes match. The proto3 JSON mapping gives them no special form: they
/// decode as the messages they are.
enum ProtoApiFiles {
    /// The built-in file imported as `path`, if it is one.
    static func file(_ path: String) -> ProtoFile? {
        switch path {
        case "google/protobuf/source_context.proto":
            ProtoFile(
                name: path, package: "google.protobuf", messages: [ProtoMessage(name: "SourceContext", fields: [string("file_name", 1)])],
                syntax: .proto3)
        case "google/protobuf/type.proto": typeFile
        case "google/protobuf/api.proto": apiFile
        default: nil
        }
    }

    private static let sourceContext = ".google.protobuf.SourceContext"
    private static let syntax = ".google.protobuf.Syntax"

    private static var typeFile: ProtoFile {
        let type = ProtoMessage(
            name: "Type",
            fields: [
                string("name", 1), message("fields", 2, ".google.protobuf.Field", repeated: true), string("oneofs", 3, repeated: true),
                options(4), message("source_context", 5, sourceContext), enumeration("syntax", 6, syntax), string("edition", 7),
            ])
        let kinds = [
            "DOUBLE", "FLOAT", "INT64", "UINT64", "INT32", "FIXED64", "FIXED32", "BOOL", "STRING", "GROUP", "MESSAGE", "BYTES",
            "UINT32", "ENUM", "SFIXED32", "SFIXED64", "SINT32", "SINT64",
        ]
        let field = ProtoMessage(
            name: "Field",
            fields: [
                enumeration("kind", 1, ".google.protobuf.Field.Kind"), enumeration("cardinality", 2, ".google.protobuf.Field.Cardinality"),
                ProtoField(name: "number", number: 3, kind: .int32), string("name", 4), string("type_url", 6),
                ProtoField(name: "oneof_index", number: 7, kind: .int32), ProtoField(name: "packed", number: 8, kind: .bool), options(9),
                string("json_name", 10), string("default_value", 11),
            ],
            nestedEnums: [
                ProtoEnum(name: "Kind", numbering: ["TYPE_UNKNOWN"] + kinds.map { "TYPE_" + $0 }),
                ProtoEnum(name: "Cardinality", numbering: ["UNKNOWN", "OPTIONAL", "REQUIRED", "REPEATED"].map { "CARDINALITY_" + $0 }),
            ])
        let enumMessage = ProtoMessage(
            name: "Enum",
            fields: [
                string("name", 1), message("enumvalue", 2, ".google.protobuf.EnumValue", repeated: true), options(3),
                message("source_context", 4, sourceContext), enumeration("syntax", 5, syntax), string("edition", 6),
            ])
        let enumValue = ProtoMessage(name: "EnumValue", fields: [string("name", 1), ProtoField(name: "number", number: 2, kind: .int32), options(3)])
        let option = ProtoMessage(name: "Option", fields: [string("name", 1), message("value", 2, ".google.protobuf.Any")])
        return ProtoFile(
            name: "google/protobuf/type.proto", package: "google.protobuf",
            dependencies: ["google/protobuf/any.proto", "google/protobuf/source_context.proto"],
            messages: [type, field, enumMessage, enumValue, option],
            enums: [ProtoEnum(name: "Syntax", numbering: ["SYNTAX_PROTO2", "SYNTAX_PROTO3", "SYNTAX_EDITIONS"])], syntax: .proto3)
    }

    private static var apiFile: ProtoFile {
        let api = ProtoMessage(
            name: "Api",
            fields: [
                string("name", 1), message("methods", 2, ".google.protobuf.Method", repeated: true), options(3), string("version", 4),
                message("source_context", 5, sourceContext), message("mixins", 6, ".google.protobuf.Mixin", repeated: true),
                enumeration("syntax", 7, syntax), string("edition", 8),
            ])
        let method = ProtoMessage(
            name: "Method",
            fields: [
                string("name", 1), string("request_type_url", 2), ProtoField(name: "request_streaming", number: 3, kind: .bool),
                string("response_type_url", 4), ProtoField(name: "response_streaming", number: 5, kind: .bool), options(6),
                enumeration("syntax", 7, syntax), string("edition", 8),
            ])
        let mixin = ProtoMessage(name: "Mixin", fields: [string("name", 1), string("root", 2)])
        return ProtoFile(
            name: "google/protobuf/api.proto", package: "google.protobuf",
            dependencies: ["google/protobuf/source_context.proto", "google/protobuf/type.proto"], messages: [api, method, mixin],
            syntax: .proto3)
    }

    private static func string(_ name: String, _ number: Int32, repeated: Bool = false) -> ProtoField {
        ProtoField(name: name, number: number, label: repeated ? .repeated : .optional, kind: .string)
    }

    private static func message(_ name: String, _ number: Int32, _ type: String, repeated: Bool = false) -> ProtoField {
        ProtoField(name: name, number: number, label: repeated ? .repeated : .optional, kind: .message, typeName: type)
    }

    private static func enumeration(_ name: String, _ number: Int32, _ type: String) -> ProtoField {
        ProtoField(name: name, number: number, kind: .enum, typeName: type)
    }

    /// `repeated Option options`, which every message here but Mixin and SourceContext has.
    private static func options(_ number: Int32) -> ProtoField {
        message("options", number, ".google.protobuf.Option", repeated: true)
    }
}
