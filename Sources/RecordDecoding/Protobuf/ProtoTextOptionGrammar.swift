/// Options: `option name = value;` statements and `[name = value, …]` lists. Only the few the
/// model needs are looked at; the rest, custom `(ext).path` options and aggregate `{ … }` values
/// included, are read for their syntax and dropped.
extension ProtoTextReader {
    /// An option's value, as far as anyone here asks about it.
    enum Constant: Equatable {
        /// `true`, `FOO`, `inf`, `pkg.FOO`
        case identifier(String)
        case number
        case string
        /// A text-format message value `{ … }`, skipped whole.
        case aggregate

        var bool: Bool? {
            switch self {
            case .identifier("true"): true
            case .identifier("false"): false
            default: nil
            }
        }
    }

    /// `option name = value;`; gives the option's name as written and its value.
    mutating func optionStatement() throws(SchemaError) -> (name: String, value: Constant) {
        next()
        let name = try optionName()
        try expect("=", "after option name `\(name)`")
        let value = try constant()
        try expect(";", "after option `\(name)`")
        return (name, value)
    }

    /// `[packed = true, deprecated = true, (my.opt).x = { … }]` after a field, enum value or
    /// extension range; gives `packed` and where it was written, when it was.
    mutating func fieldOptions() throws(SchemaError) -> (packed: Bool?, packedPosition: ProtoTextPosition?) {
        guard take("[") else { return (nil, nil) }
        var packed: Bool?
        var packedPosition: ProtoTextPosition?
        repeat {
            let position = current.position
            let name = try optionName()
            try expect("=", "after option name `\(name)`")
            let valuePosition = current.position
            let value = try constant()
            if name == "packed" {
                guard let flag = value.bool else { throw valuePosition.error("`packed` is `true` or `false`") }
                packed = flag
                packedPosition = position
            } else if name == "default", syntax == .proto3 {
                throw position.error("proto3 fields have no `default` option: their default is always the zero value")
            }
        } while take(",")
        try expect("]", "to close the options list")
        return (packed, packedPosition)
    }

    /// `simple`, `(full.extension.name)`, and dotted paths of either: `(my.opt).field.(ext)`.
    private mutating func optionName() throws(SchemaError) -> String {
        var name = ""
        repeat {
            if !name.isEmpty { name += "." }
            if take("(") {
                name += "(" + (try fullIdentifier("an extension name after `(`", allowLeadingDot: true)) + ")"
                try expect(")", "after the extension name `\(name)`")
            } else {
                name += try identifier("an option name").text
            }
        } while take(".")
        return name
    }

    /// A constant: a (dotted) identifier, a signed number, `-inf`, a string, or an aggregate.
    private mutating func constant() throws(SchemaError) -> Constant {
        if current.isSymbol("{") {
            try skipAggregate()
            return .aggregate
        }
        if current.kind == .string {
            _ = try string("a string")
            return .string
        }
        let signed = take("-") || take("+")
        switch current.kind {
        case .integer, .float:
            next()
            return .number
        case .identifier where !signed:
            return .identifier(try fullIdentifier("a value"))
        case .identifier where current.text == "inf" || current.text == "nan":
            next()
            return .number
        default:
            throw unexpected(signed ? "a number after the sign" : "an option value")
        }
    }

    /// Skips `{ … }` in text format, nested to any depth (a counter, not recursion); strings in
    /// it are whole tokens, so braces inside them do not count.
    private mutating func skipAggregate() throws(SchemaError) {
        let open = current.position
        var depth = 0
        repeat {
            let token = next()
            if token.kind == .end { throw open.error("the `{` value that starts here is never closed") }
            if token.isSymbol("{") { depth += 1 }
            if token.isSymbol("}") { depth -= 1 }
        } while depth > 0
    }
}
