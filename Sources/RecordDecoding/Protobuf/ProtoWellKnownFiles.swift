/// The well-known types' files, built in: serializers do not register them as references
/// (confluent-kafka's `skip.known.types` is on by default), so a schema that imports
/// `google/protobuf/timestamp.proto` arrives without it.
///
/// Written from the field lists documented for each type (protobuf.dev/reference/protobuf/
/// google.protobuf); they hold what decoding needs: names, numbers, types, oneofs and the map.
/// Messages are in each file's order, so message indexes into them match the real files.
enum ProtoWellKnownFiles {
    static let paths: Set<String> = [
        "google/protobuf/timestamp.proto", "google/protobuf/duration.proto", "google/protobuf/wrappers.proto",
        "google/protobuf/struct.proto", "google/protobuf/any.proto", "google/protobuf/empty.proto",
        "google/protobuf/field_mask.proto", "confluent/type/decimal.proto",
    ]

    /// The built-in file imported as `path`, if it is one.
    static func file(_ path: String) -> ProtoFile? {
        switch path {
        case "google/protobuf/timestamp.proto": single(path, "Timestamp", secondsAndNanos)
        case "google/protobuf/duration.proto": single(path, "Duration", secondsAndNanos)
        case "google/protobuf/wrappers.proto": wrappers
        case "google/protobuf/struct.proto": structFile
        case "google/protobuf/any.proto":
            single(path, "Any", [ProtoField(name: "type_url", number: 1, kind: .string), ProtoField(name: "value", number: 2, kind: .bytes)])
        case "google/protobuf/empty.proto": single(path, "Empty", [])
        case "google/protobuf/field_mask.proto": single(path, "FieldMask", [ProtoField(name: "paths", number: 1, label: .repeated, kind: .string)])
        // Confluent's own, which its serializers also treat as known (never a reference):
        // a decimal as an unscaled big-endian two's-complement integer, its precision and scale.
        case "confluent/type/decimal.proto":
            ProtoFile(
                name: path, package: "confluent.type",
                messages: [
                    ProtoMessage(
                        name: "Decimal",
                        fields: [
                            ProtoField(name: "value", number: 1, kind: .bytes), ProtoField(name: "precision", number: 2, kind: .uint32),
                            ProtoField(name: "scale", number: 3, kind: .int32),
                        ])
                ])
        // Imported for options only (custom options; Confluent's field and file metadata): no
        // type of theirs can be a field's, and options are not read, so they stand empty.
        case "google/protobuf/descriptor.proto": ProtoFile(name: path, package: "google.protobuf", syntax: .proto2)
        case "confluent/meta.proto": ProtoFile(name: path, package: "confluent", syntax: .proto3)
        default: nil
        }
    }

    private static let secondsAndNanos = [
        ProtoField(name: "seconds", number: 1, kind: .int64), ProtoField(name: "nanos", number: 2, kind: .int32),
    ]

    private static func single(_ path: String, _ name: String, _ fields: [ProtoField]) -> ProtoFile {
        ProtoFile(name: path, package: "google.protobuf", messages: [ProtoMessage(name: name, fields: fields)], syntax: .proto3)
    }

    private static var wrappers: ProtoFile {
        let kinds: [(String, ProtoField.Kind)] = [
            ("DoubleValue", .double), ("FloatValue", .float), ("Int64Value", .int64), ("UInt64Value", .uint64),
            ("Int32Value", .int32), ("UInt32Value", .uint32), ("BoolValue", .bool), ("StringValue", .string),
            ("BytesValue", .bytes),
        ]
        return ProtoFile(
            name: "google/protobuf/wrappers.proto", package: "google.protobuf",
            messages: kinds.map { ProtoMessage(name: $0.0, fields: [ProtoField(name: "value", number: 1, kind: $0.1)]) },
            syntax: .proto3)
    }

    private static var structFile: ProtoFile {
        let value = ".google.protobuf.Value"
        let fieldsEntry = ProtoMessage(
            name: "FieldsEntry",
            fields: [
                ProtoField(name: "key", number: 1, kind: .string),
                ProtoField(name: "value", number: 2, kind: .message, typeName: value),
            ], isMapEntry: true)
        let structMessage = ProtoMessage(
            name: "Struct",
            fields: [
                ProtoField(name: "fields", number: 1, label: .repeated, kind: .message, typeName: ".google.protobuf.Struct.FieldsEntry")
            ],
            nestedMessages: [fieldsEntry])
        let valueMessage = ProtoMessage(
            name: "Value",
            fields: [
                ProtoField(name: "null_value", number: 1, kind: .enum, typeName: ".google.protobuf.NullValue", oneofIndex: 0),
                ProtoField(name: "number_value", number: 2, kind: .double, oneofIndex: 0),
                ProtoField(name: "string_value", number: 3, kind: .string, oneofIndex: 0),
                ProtoField(name: "bool_value", number: 4, kind: .bool, oneofIndex: 0),
                ProtoField(name: "struct_value", number: 5, kind: .message, typeName: ".google.protobuf.Struct", oneofIndex: 0),
                ProtoField(name: "list_value", number: 6, kind: .message, typeName: ".google.protobuf.ListValue", oneofIndex: 0),
            ],
            oneofs: ["kind"])
        let listValue = ProtoMessage(
            name: "ListValue", fields: [ProtoField(name: "values", number: 1, label: .repeated, kind: .message, typeName: value)])
        return ProtoFile(
            name: "google/protobuf/struct.proto", package: "google.protobuf",
            messages: [structMessage, valueMessage, listValue],
            enums: [ProtoEnum(name: "NullValue", values: [("NULL_VALUE", 0)])], syntax: .proto3)
    }
}
