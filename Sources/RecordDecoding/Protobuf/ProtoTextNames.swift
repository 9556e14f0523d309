/// The names protoc makes up for what the text leaves implicit; they must match protoc's
/// exactly, since descriptors from either source must compare equal and other tools see them.
enum ProtoTextNames {
    /// `map<…> item_prices` gets the entry type `ItemPricesEntry`: underscores dropped, the
    /// letter after each (and the first) capitalised, the rest as written.
    static func mapEntryName(of field: String) -> String {
        var name = ""
        var capitalizeNext = true
        for character in field {
            if character == "_" {
                capitalizeNext = true
            } else if capitalizeNext {
                name += character.uppercased()
                capitalizeNext = false
            } else {
                name.append(character)
            }
        }
        return name + "Entry"
    }

    /// Gives each proto3 `optional` field its own oneof, after the written ones and in field
    /// order: `_name` (`name` itself when it already starts with `_`), prefixed with `X` until no
    /// field or oneof of the message has that name.
    static func addSyntheticOneofs(to message: inout ProtoTextMessage) {
        var taken = Set(message.fields.map(\.field.name))
        taken.formUnion(message.oneofs)
        for index in message.fields.indices where message.fields[index].field.proto3Optional {
            let field = message.fields[index].field.name
            var name = field.hasPrefix("_") ? field : "_" + field
            while taken.contains(name) { name = "X" + name }
            taken.insert(name)
            message.fields[index].field.oneofIndex = message.oneofs.count
            message.oneofs.append(name)
        }
    }
}
