/// Fields: plain, `map<K, V>` and proto2 groups, with the label rules of each syntax.
extension ProtoTextReader {
    /// Where a field is declared: the label rules and what may be declared differ.
    enum FieldContext {
        case message, oneof, extend
    }

    /// A field and the message it made, if any (a group's body or a map's entry type).
    struct ParsedField {
        var field: ProtoTextField
        var generated: ProtoTextMessage?
    }

    /// Field numbers `protoc` accepts: 1 to 2^29 - 1, without 19000-19999 (kept for protobuf itself).
    static let fieldNumbers: ClosedRange<Int64> = 1...536_870_911

    static let scalarKinds: [String: ProtoField.Kind] = [
        "double": .double, "float": .float, "int64": .int64, "uint64": .uint64, "int32": .int32, "fixed64": .fixed64,
        "fixed32": .fixed32, "bool": .bool, "string": .string, "bytes": .bytes, "uint32": .uint32, "sfixed32": .sfixed32,
        "sfixed64": .sfixed64, "sint32": .sint32, "sint64": .sint64,
    ]

    /// `[label] type name = number [options];`, `map<K, V> name = number;` or
    /// `label group Name = number { … }`.
    mutating func field(in context: FieldContext) throws(SchemaError) -> ParsedField {
        let labelToken = current
        let label = try self.label(in: context)
        if current.isWord("map"), peek(1).isSymbol("<") {
            guard label == nil, context == .message else {
                let what = context == .message ? "takes no label" : context == .oneof ? "cannot be in a oneof" : "cannot be an extension"
                throw labelToken.position.error("a map field \(what)")
            }
            return try mapField()
        }
        if label == nil, syntax == .proto2, context != .oneof {
            throw unexpected("`required`, `optional` or `repeated` before a proto2 field")
        }
        if current.isWord("group") { return try group(label: label ?? .optional) }
        let typePosition = current.position
        let (kind, type) = try fieldType("a field type")
        let (name, number, options) = try nameNumberAndOptions()
        let field = ProtoField(
            name: name.text, number: Int32(number), label: label ?? .optional, kind: kind,
            proto3Optional: syntax == .proto3 && label == .optional, packed: options.packed)
        return ParsedField(
            field: ProtoTextField(
                field: field, type: type, typePosition: typePosition, namePosition: name.position, packedPosition: options.packedPosition))
    }

    /// The label, when one is written, after the checks of the field's syntax and place.
    private mutating func label(in context: FieldContext) throws(SchemaError) -> ProtoField.Label? {
        let token = current
        let label: ProtoField.Label
        switch token.kind == .identifier ? token.text : "" {
        case "optional": label = .optional
        case "required": label = .required
        case "repeated": label = .repeated
        default: return nil
        }
        guard context != .oneof else {
            throw token.position.error("a field in a oneof takes no label (`\(token.text)`)")
        }
        guard syntax == .proto2 || label != .required else {
            throw token.position.error("proto3 has no `required` fields")
        }
        next()
        return label
    }

    /// `map<K, V> name = number [options];`: a repeated field of a generated `NameEntry` message
    /// with `key` = 1 and `value` = 2, as protoc makes it.
    private mutating func mapField() throws(SchemaError) -> ParsedField {
        next()
        try expect("<", "after `map`")
        let keyToken = current
        guard let keyKind = Self.scalarKinds[keyToken.text], keyToken.kind == .identifier,
            ![.double, .float, .bytes].contains(keyKind)
        else {
            throw keyToken.position.error("a map key must be an integer type, `bool` or `string`, not \(keyToken.shown)")
        }
        next()
        try expect(",", "after the map's key type")
        let valuePosition = current.position
        let (valueKind, valueType) = try fieldType("the map's value type")
        try expect(">", "after the map's value type")
        let (name, number, options) = try nameNumberAndOptions()
        let entryName = ProtoTextNames.mapEntryName(of: name.text)
        let key = ProtoTextField(
            field: ProtoField(name: "key", number: 1, kind: keyKind), type: .scalar, typePosition: keyToken.position,
            namePosition: name.position)
        let value = ProtoTextField(
            field: ProtoField(name: "value", number: 2, kind: valueKind), type: valueType, typePosition: valuePosition,
            namePosition: name.position)
        let entry = ProtoTextMessage(name: entryName, position: name.position, fields: [key, value], isMapEntry: true)
        let field = ProtoField(name: name.text, number: Int32(number), label: .repeated, kind: .message, packed: options.packed)
        return ParsedField(
            field: ProtoTextField(
                field: field, type: .nested(entryName), typePosition: name.position, namePosition: name.position,
                packedPosition: options.packedPosition),
            generated: entry)
    }

    /// `label group Name = number [options] { … }` (proto2): a `.group` field named `name`
    /// (lowercased) whose type is the nested message `Name` the body declares.
    private mutating func group(label: ProtoField.Label) throws(SchemaError) -> ParsedField {
        let keyword = next()
        guard syntax == .proto2 else {
            throw keyword.position.error("groups are proto2 only; proto3 has nested messages instead")
        }
        let name = try identifier("a group name after `group`")
        guard let first = name.text.utf8.first, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) else {
            throw name.position.error("a group's name must start with a capital letter, and `\(name.text)` does not")
        }
        try expect("=", "after group name `\(name.text)`")
        let number = try integer("the number of group `\(name.text)`", in: Self.fieldNumbers)
        try Self.checkNumber(number, of: name)
        let options = try fieldOptions()
        var body = ProtoTextMessage(name: name.text, position: name.position)
        try messageBody(&body)
        let field = ProtoField(name: name.text.lowercased(), number: Int32(number), label: label, kind: .group, packed: options.packed)
        return ParsedField(
            field: ProtoTextField(
                field: field, type: .nested(name.text), typePosition: keyword.position, namePosition: name.position,
                packedPosition: options.packedPosition),
            generated: body)
    }

    /// A field's type: a scalar's kind, or a message or enum as written (resolved later).
    private mutating func fieldType(_ what: String) throws(SchemaError) -> (ProtoField.Kind, ProtoTextTypeReference) {
        if current.kind == .identifier, let scalar = Self.scalarKinds[current.text] {
            next()
            return (scalar, .scalar)
        }
        return (.message, .written(try fullIdentifier(what, allowLeadingDot: true)))
    }

    /// `name = number [options];`, after a field's type.
    private mutating func nameNumberAndOptions() throws(SchemaError) -> (
        name: ProtoTextToken, number: Int64, options: (packed: Bool?, packedPosition: ProtoTextPosition?)
    ) {
        let name = try identifier("a field name")
        try expect("=", "after field name `\(name.text)`")
        let number = try integer("the number of field `\(name.text)`", in: Self.fieldNumbers)
        try Self.checkNumber(number, of: name)
        let options = try fieldOptions()
        try expect(";", "after field `\(name.text)`")
        return (name, number, options)
    }

    private static func checkNumber(_ number: Int64, of name: ProtoTextToken) throws(SchemaError) {
        guard !(19_000...19_999).contains(number) else {
            throw name.position.error("field `\(name.text)` has number \(number), in 19000-19999, which protobuf keeps for itself")
        }
    }
}
