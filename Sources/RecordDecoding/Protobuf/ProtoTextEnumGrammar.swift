/// Enums (kept) and services (read and dropped).
extension ProtoTextReader {
    /// `enum Name { VALUE = 1 [options]; option allow_alias = true; reserved …; }`
    mutating func enumDefinition() throws(SchemaError) -> ProtoTextEnum {
        next()
        let name = try identifier("an enum name after `enum`")
        try expect("{", "to open enum `\(name.text)`")
        var values: [(name: String, number: Int32)] = []
        var positions: [ProtoTextPosition] = []
        var allowAlias = false
        while !take("}") {
            if current.isWord("option") {
                let option = try optionStatement()
                if option.name == "allow_alias" { allowAlias = option.value.bool == true }
            } else if current.isWord("reserved") {
                try reserved()
            } else if !take(";") {
                guard current.kind != .end else { throw unexpected("`}` to close enum `\(name.text)`") }
                let value = try identifier("an enum value name")
                try expect("=", "after enum value `\(value.text)`")
                let number = try signedInteger(
                    "the number of enum value `\(value.text)`", negative: take("-"), in: Int64(Int32.min)...Int64(Int32.max))
                _ = try fieldOptions()
                try expect(";", "after enum value `\(value.text)`")
                values.append((value.text, Int32(number)))
                positions.append(value.position)
            }
        }
        let result = ProtoEnum(name: name.text, values: values)
        try ProtoTextChecks.validEnum(result, at: name.position, valuePositions: positions, allowAlias: allowAlias, syntax: syntax)
        return ProtoTextEnum(value: result, position: name.position)
    }

    /// `service Name { rpc Call (Request) returns (stream Reply) { option … } }`: read for its
    /// syntax and its name (which takes a place in the scope), nothing else kept.
    mutating func service() throws(SchemaError) -> ProtoTextService {
        next()
        let name = try identifier("a service name after `service`")
        try expect("{", "to open service `\(name.text)`")
        while !take("}") {
            if current.isWord("option") {
                _ = try optionStatement()
            } else if takeWord("rpc") {
                try rpc()
            } else if !take(";") {
                throw unexpected("`rpc`, `option` or `}` in service `\(name.text)`")
            }
        }
        return ProtoTextService(name: name.text, position: name.position)
    }

    private mutating func rpc() throws(SchemaError) {
        let name = try identifier("a method name after `rpc`")
        try messageType(of: name.text)
        guard takeWord("returns") else { throw unexpected("`returns` after the request type of `\(name.text)`") }
        try messageType(of: name.text)
        if take("{") {
            while !take("}") {
                if current.isWord("option") {
                    _ = try optionStatement()
                } else if !take(";") {
                    throw unexpected("`option` or `}` in method `\(name.text)`")
                }
            }
        } else {
            try expect(";", "or `{` after method `\(name.text)`")
        }
    }

    /// `( [stream] Type )`
    private mutating func messageType(of method: String) throws(SchemaError) {
        try expect("(", "before a type of method `\(method)`")
        if current.isWord("stream"), peek(1).kind == .identifier || peek(1).isSymbol(".") { next() }
        _ = try fullIdentifier("a message type of method `\(method)`", allowLeadingDot: true)
        try expect(")", "after a type of method `\(method)`")
    }
}
