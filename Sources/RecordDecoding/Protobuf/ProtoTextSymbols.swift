/// Every name a type reference can land on, by full name (no leading dot): packages and each
/// prefix of them, messages, enums and services, from the file and from its imports.
///
/// Fields and enum values are left out on purpose: protobuf's lookup of a type name passes over
/// them (a field `Foo` does not hide a message `Foo` further out), so they never change a result.
struct ProtoTextSymbols {
    enum Kind: String {
        case package, message, `enum`, service

        var isType: Bool { self == .message || self == .enum }
    }

    struct Symbol {
        var kind: Kind
        /// The file that defines it; for a package, the first file seen with it.
        var file: String
        /// Where the text being parsed defines it; nil for imported names.
        var position: ProtoTextPosition?
    }

    /// Every kind is a scope: a dotted name's first part found as any of them fixes where the
    /// rest is looked up.
    private(set) var table: [String: Symbol] = [:]

    /// The imported files' names. They are trusted (protoc or this parser made them), so a
    /// clash among them keeps the first; the walk is a worklist, not recursion.
    mutating func addImported(_ files: [ProtoFile]) {
        for file in files {
            for prefix in Self.prefixes(of: file.package) where table[prefix] == nil {
                table[prefix] = Symbol(kind: .package, file: file.name)
            }
            var pending = file.messages.map { (Self.join(file.package, $0.name), $0) }
            for enumeration in file.enums where table[Self.join(file.package, enumeration.name)] == nil {
                table[Self.join(file.package, enumeration.name)] = Symbol(kind: .enum, file: file.name)
            }
            while let (fullName, message) = pending.popLast() {
                if table[fullName] == nil { table[fullName] = Symbol(kind: .message, file: file.name) }
                pending += message.nestedMessages.map { (Self.join(fullName, $0.name), $0) }
                for enumeration in message.nestedEnums where table[Self.join(fullName, enumeration.name)] == nil {
                    table[Self.join(fullName, enumeration.name)] = Symbol(kind: .enum, file: file.name)
                }
            }
        }
    }

    /// The parsed file's names; one already taken (here or by an import) is an error at the
    /// second definition.
    mutating func addLocal(_ file: ProtoTextFile, name: String) throws(SchemaError) {
        for prefix in Self.prefixes(of: file.package) {
            if let existing = table[prefix], existing.kind != .package {
                throw file.packagePosition.error("package `\(file.package)` clashes with \(Self.describe(prefix, existing))")
            }
            table[prefix] = table[prefix] ?? Symbol(kind: .package, file: name, position: file.packagePosition)
        }
        for message in file.messages { try add(message, in: file.package, file: name) }
        for enumeration in file.enums { try add(Self.join(file.package, enumeration.value.name), .enum, at: enumeration.position, file: name) }
        for service in file.services { try add(Self.join(file.package, service.name), .service, at: service.position, file: name) }
    }

    private mutating func add(_ message: ProtoTextMessage, in scope: String, file: String) throws(SchemaError) {
        let fullName = Self.join(scope, message.name)
        try add(fullName, .message, at: message.position, file: file)
        for nested in message.nestedMessages { try add(nested, in: fullName, file: file) }
        for enumeration in message.nestedEnums { try add(Self.join(fullName, enumeration.value.name), .enum, at: enumeration.position, file: file) }
    }

    private mutating func add(_ fullName: String, _ kind: Kind, at position: ProtoTextPosition, file: String) throws(SchemaError) {
        if let existing = table[fullName] {
            throw position.error("`\(fullName)` is defined twice: this \(kind.rawValue) clashes with \(Self.describe(fullName, existing))")
        }
        table[fullName] = Symbol(kind: kind, file: file, position: position)
    }

    private static func describe(_ fullName: String, _ symbol: Symbol) -> String {
        if let position = symbol.position {
            "the \(symbol.kind.rawValue) `\(fullName)` at line \(position.line):\(position.column)"
        } else {
            "the \(symbol.kind.rawValue) `\(fullName)` of imported file `\(symbol.file)`"
        }
    }

    /// `a.b.c` -> `a`, `a.b`, `a.b.c`; none for the empty package.
    static func prefixes(of package: String) -> [String] {
        guard !package.isEmpty else { return [] }
        var result: [String] = []
        var current = ""
        for part in package.split(separator: ".", omittingEmptySubsequences: false) {
            current = current.isEmpty ? String(part) : current + "." + part
            result.append(current)
        }
        return result
    }

    static func join(_ scope: String, _ name: String) -> String { scope.isEmpty ? name : scope + "." + name }
}
