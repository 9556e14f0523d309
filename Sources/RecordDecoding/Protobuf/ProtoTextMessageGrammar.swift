/// Messages, oneofs and `extend` blocks. Fields themselves are in ProtoTextFieldGrammar.swift.
extension ProtoTextReader {
    /// `message Name { … }`
    mutating func message() throws(SchemaError) -> ProtoTextMessage {
        next()
        let name = try identifier("a message name after `message`")
        var message = ProtoTextMessage(name: name.text, position: name.position)
        try messageBody(&message)
        return message
    }

    /// `{ … }` of a message or a group: its statements, then the checks and additions that need
    /// the whole body (proto3 `optional`'s synthetic oneofs, duplicate names and numbers).
    mutating func messageBody(_ message: inout ProtoTextMessage) throws(SchemaError) {
        let open = current.position
        try expect("{", "to open message `\(message.name)`")
        try enterBody(at: open)
        while !take("}") {
            let token = current
            switch token.kind == .identifier ? token.text : "" {
            case "message":
                message.nestedMessages.append(try self.message())
            case "enum":
                message.nestedEnums.append(try enumDefinition())
            case "oneof":
                try oneof(in: &message)
            case "option":
                _ = try optionStatement()
            case "reserved":
                try reserved()
            case "extensions":
                try extensionRanges()
            case "extend":
                message.nestedMessages += try extend()
            default:
                if take(";") { continue }
                guard token.kind != .end else { throw unexpected("`}` to close message `\(message.name)`") }
                let parsed = try field(in: .message)
                message.fields.append(parsed.field)
                if let generated = parsed.generated { message.nestedMessages.append(generated) }
            }
        }
        leaveBody()
        try ProtoTextChecks.uniqueFields(of: message)
        ProtoTextNames.addSyntheticOneofs(to: &message)
    }

    /// `oneof name { fields }`: its fields join the message's, pointing at the oneof.
    private mutating func oneof(in message: inout ProtoTextMessage) throws(SchemaError) {
        next()
        let name = try identifier("a oneof name after `oneof`")
        try expect("{", "to open oneof `\(name.text)`")
        let index = message.oneofs.count
        message.oneofs.append(name.text)
        var count = 0
        while !take("}") {
            if current.isWord("option") {
                _ = try optionStatement()
            } else if !take(";") {
                guard current.kind != .end else { throw unexpected("`}` to close oneof `\(name.text)`") }
                var parsed = try field(in: .oneof)
                parsed.field.field.oneofIndex = index
                message.fields.append(parsed.field)
                if let generated = parsed.generated { message.nestedMessages.append(generated) }
                count += 1
            }
        }
        guard count > 0 else { throw name.position.error("oneof `\(name.text)` has no fields; it needs at least one") }
    }

    /// `extend Type { fields }`: the extensions are read and left out of the model, but a group
    /// among them still makes a message in the enclosing scope (as protoc does), returned here.
    mutating func extend() throws(SchemaError) -> [ProtoTextMessage] {
        next()
        _ = try fullIdentifier("the name of the message to extend", allowLeadingDot: true)
        try expect("{", "to open the `extend` block")
        var generated: [ProtoTextMessage] = []
        while !take("}") {
            if take(";") { continue }
            guard current.kind != .end else { throw unexpected("`}` to close the `extend` block") }
            if let message = try field(in: .extend).generated { generated.append(message) }
        }
        return generated
    }

    /// `reserved 2, 9 to 11, 40 to max;` or `reserved "foo", "bar";`, in messages and enums.
    /// Read and not kept: the model has no use for them.
    mutating func reserved() throws(SchemaError) {
        next()
        if current.kind == .string {
            repeat { _ = try string("a reserved name") } while take(",")
        } else {
            try ranges("a reserved number")
        }
        try expect(";", "after the reserved numbers or names")
    }

    /// `extensions 100 to 199, 1000 to max [options];`, read and not kept.
    private mutating func extensionRanges() throws(SchemaError) {
        next()
        try ranges("an extension number")
        _ = try fieldOptions()
        try expect(";", "after the extension ranges")
    }

    private mutating func ranges(_ what: String) throws(SchemaError) {
        let any = Int64(Int32.min)...Int64(UInt32.max)
        repeat {
            _ = try signedInteger(what, negative: take("-"), in: any)
            if takeWord("to"), !takeWord("max") {
                _ = try signedInteger(what, negative: take("-"), in: any)
            }
        } while take(",")
    }
}
