/// Turns the parsed text into the model: every written type name becomes a full name with a
/// leading dot, found by protobuf's scoping rules, and its kind (`.message` / `.enum`) is set.
struct ProtoTextResolver {
    /// What looking a written name up found.
    enum Lookup: Equatable {
        case type(String, ProtoTextSymbols.Kind)
        /// Nothing of that name anywhere in scope.
        case unknown
        /// A dotted name whose first part was found, in the innermost scope that has it, where
        /// the rest is not: protobuf does not look further out.
        case missingInScope(String)
        /// Found, but a package or a service.
        case notAType(String, ProtoTextSymbols.Kind)
    }

    private let file: ProtoTextFile
    private let name: String
    private let symbols: ProtoTextSymbols

    /// Collects the names of `imports` and of `file` (which may clash: an error).
    init(file: ProtoTextFile, name: String, imports: [ProtoFile]) throws(SchemaError) {
        var symbols = ProtoTextSymbols()
        symbols.addImported(imports)
        try symbols.addLocal(file, name: name)
        self.file = file
        self.name = name
        self.symbols = symbols
    }

    func resolve() throws(SchemaError) -> ProtoFile {
        var messages: [ProtoMessage] = []
        for message in file.messages { messages.append(try self.message(message, in: file.package)) }
        return ProtoFile(
            name: name, package: file.package, dependencies: file.dependencies, messages: messages, enums: file.enums.map(\.value),
            syntax: file.syntax)
    }

    /// Depth is bounded: the parser refused messages nested more than 64 deep.
    private func message(_ message: ProtoTextMessage, in scope: String) throws(SchemaError) -> ProtoMessage {
        let fullName = ProtoTextSymbols.join(scope, message.name)
        var fields: [ProtoField] = []
        for field in message.fields { fields.append(try self.field(field, in: fullName)) }
        var nested: [ProtoMessage] = []
        for inner in message.nestedMessages { nested.append(try self.message(inner, in: fullName)) }
        return ProtoMessage(
            name: message.name, fields: fields, nestedMessages: nested, nestedEnums: message.nestedEnums.map(\.value),
            oneofs: message.oneofs, isMapEntry: message.isMapEntry)
    }

    private func field(_ parsed: ProtoTextField, in scope: String) throws(SchemaError) -> ProtoField {
        var field = parsed.field
        switch parsed.type {
        case .scalar:
            break
        case .nested(let name):
            field.typeName = "." + ProtoTextSymbols.join(scope, name)
        case .written(let written):
            switch lookup(written, from: scope) {
            case .type(let fullName, let kind):
                field.typeName = "." + fullName
                field.kind = kind == .enum ? .enum : .message
            case .unknown:
                throw parsed.typePosition.error("unknown type `\(written)`: no message or enum of that name is in scope or in the imports")
            case .missingInScope(let fullName):
                throw parsed.typePosition.error(
                    "`\(written)` resolves to `\(fullName)`, which is not defined: the innermost scope that has `\(Self.firstPart(of: written))` "
                        + "is the one searched (a leading `.` makes a name absolute)")
            case .notAType(let fullName, let kind):
                throw parsed.typePosition.error("`\(written)` is the \(kind.rawValue) `\(fullName)`, not a message or enum")
            }
        }
        if field.packed != nil, field.label != .repeated || [.string, .bytes, .message, .group].contains(field.kind) {
            throw (parsed.packedPosition ?? parsed.namePosition).error(
                "`packed` applies only to repeated fields of numbers, bools and enums, and `\(field.name)` is not one")
        }
        return field
    }

    /// Protobuf's lookup: a name with a leading dot is absolute. Otherwise its first part is
    /// looked for in the scope of the message that uses it, then each enclosing scope outwards
    /// to the top; a plain name must find a type (anything else is passed over), and a dotted
    /// one stops at the first scope with its first part, the rest looked up inside that alone.
    func lookup(_ written: String, from scope: String) -> Lookup {
        if written.hasPrefix(".") { return found(String(written.dropFirst())) ?? .unknown }
        let first = Self.firstPart(of: written)
        var scope = Substring(scope)
        while true {
            let candidate = scope.isEmpty ? first : scope + "." + first
            if let symbol = symbols.table[candidate] {
                if first.count < written.count {
                    let fullName = candidate + written.dropFirst(first.count)
                    return found(fullName) ?? .missingInScope(fullName)
                }
                if symbol.kind.isType { return .type(candidate, symbol.kind) }
            }
            guard !scope.isEmpty else { return .unknown }
            scope = scope.lastIndex(of: ".").map { scope[..<$0] } ?? ""
        }
    }

    private func found(_ fullName: String) -> Lookup? {
        guard let symbol = symbols.table[fullName] else { return nil }
        return symbol.kind.isType ? .type(fullName, symbol.kind) : .notAType(fullName, symbol.kind)
    }

    private static func firstPart(of written: String) -> String {
        String(written.prefix { $0 != "." })
    }
}
