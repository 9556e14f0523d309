/// Reads `.proto` source text (proto2 and proto3) into a ``ProtoFile`` with every type name
/// resolved to its full name.
///
/// The result is what `protoc` would put in the file's `FileDescriptorProto`, as far as the
/// model goes: `map<K, V>` fields become repeated `XxxEntry` messages, proto3 `optional` fields
/// get their synthetic oneofs, and proto2 groups become `.group` fields with their generated
/// nested message (in declaration order, so Confluent's message indexes count them as protoc
/// does). Options other than `packed`, `allow_alias` and `default` are read and skipped;
/// `extend` blocks, extension ranges, `reserved` and services are read and left out of the model.
/// Editions files (`edition = "2023";`) are refused with a ``SchemaError``.
///
/// Every error starts with the place in the text: `line 12:5: expected `=` after field name`.
public enum ProtoTextParser {
    /// - Parameters:
    ///   - name: the import path the file is known by.
    ///   - imports: the files it imports (already parsed), for resolving the names it uses.
    ///     Every type in them is visible, whether the text imports its file directly or not.
    public static func parse(_ text: String, name: String, imports: [ProtoFile]) throws(SchemaError) -> ProtoFile {
        var reader = try ProtoTextReader(text)
        let file = try reader.file()
        return try ProtoTextResolver(file: file, name: name, imports: imports).resolve()
    }
}

extension ProtoTextReader {
    /// The whole text: `syntax` first when written, then any top-level statements.
    mutating func file() throws(SchemaError) -> ProtoTextFile {
        var file = ProtoTextFile()
        var sawPackage = false
        if current.isWord("syntax") {
            file.syntax = try syntaxStatement()
            syntax = file.syntax
        } else if current.isWord("edition"), peek(1).isSymbol("=") {
            throw current.position.error("editions (`edition = …`) are not supported; only proto2 and proto3 files are")
        }
        while current.kind != .end {
            let token = current
            switch token.kind == .identifier ? token.text : "" {
            case "syntax" where peek(1).isSymbol("="):
                throw token.position.error("`syntax` must be the first statement of the file")
            case "package":
                guard !sawPackage else { throw token.position.error("a file has one `package` statement, and this is its second") }
                sawPackage = true
                next()
                file.packagePosition = current.position
                file.package = try fullIdentifier("a package name after `package`")
                try expect(";", "after the package name")
            case "import":
                next()
                if current.isWord("weak") || current.isWord("public") { next() }
                file.dependencies.append(try string("the imported file's path as a string").text)
                try expect(";", "after the import")
            case "option":
                _ = try optionStatement()
            case "message":
                file.messages.append(try message())
            case "enum":
                file.enums.append(try enumDefinition())
            case "service":
                file.services.append(try service())
            case "extend":
                file.messages += try extend()
            default:
                guard take(";") else {
                    throw unexpected("`message`, `enum`, `service`, `extend`, `import`, `package` or `option`")
                }
            }
        }
        return file
    }

    /// `syntax = "proto2" | "proto3";`
    private mutating func syntaxStatement() throws(SchemaError) -> ProtoFile.Syntax {
        next()
        try expect("=", "after `syntax`")
        let value = try string("\"proto2\" or \"proto3\" after `syntax =`")
        guard let syntax = ProtoFile.Syntax(rawValue: value.text), syntax != .editions else {
            throw value.position.error("unknown syntax \"\(value.text)\"; expected \"proto2\" or \"proto3\"")
        }
        try expect(";", "after the syntax statement")
        return syntax
    }
}
