/// The checks protoc makes inside one message or enum that decoding relies on: a field number
/// names one field, and an enum number one value unless aliases are allowed.
enum ProtoTextChecks {
    /// Field names (and oneof names, which share their scope) and field numbers are unique.
    static func uniqueFields(of message: ProtoTextMessage) throws(SchemaError) {
        var names = Set(message.oneofs)
        var numbers: [Int32: String] = [:]
        for entry in message.fields {
            let field = entry.field
            guard names.insert(field.name).inserted else {
                throw entry.namePosition.error("`\(field.name)` is declared twice in message `\(message.name)`")
            }
            if let other = numbers[field.number] {
                throw entry.namePosition.error("field `\(field.name)` has number \(field.number), which `\(other)` already has")
            }
            numbers[field.number] = field.name
        }
    }

    /// An enum has values, unique names, unique numbers unless `allow_alias`, and in proto3 a
    /// first value of 0 (the default a missing field reads as).
    static func validEnum(
        _ value: ProtoEnum, at position: ProtoTextPosition, valuePositions: [ProtoTextPosition], allowAlias: Bool, syntax: ProtoFile.Syntax
    ) throws(SchemaError) {
        guard let first = value.values.first, let firstPosition = valuePositions.first else {
            throw position.error("enum `\(value.name)` has no values; it needs at least one")
        }
        guard syntax != .proto3 || first.number == 0 else {
            throw firstPosition.error("the first value of a proto3 enum is its default and must be 0, but `\(first.name)` is \(first.number)")
        }
        var names: Set<String> = []
        var numbers: [Int32: String] = [:]
        for (entry, entryPosition) in zip(value.values, valuePositions) {
            guard names.insert(entry.name).inserted else {
                throw entryPosition.error("`\(entry.name)` is declared twice in enum `\(value.name)`")
            }
            if let other = numbers[entry.number], !allowAlias {
                throw entryPosition.error(
                    "`\(entry.name)` has number \(entry.number), which `\(other)` already has; "
                        + "`option allow_alias = true;` allows that")
            }
            numbers[entry.number] = numbers[entry.number] ?? entry.name
        }
    }
}
