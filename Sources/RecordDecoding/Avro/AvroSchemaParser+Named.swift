import JSON

/// Records, enums and fixed types: the named types, and how their names are made and checked.
extension AvroSchemaParser {
    /// Reserves the node of a named type before its body is read, so the body can refer to it.
    /// Returns the node and the namespace its body's unqualified names inherit.
    ///
    /// A name with a dot is a full name and its namespace is what comes before the last dot;
    /// otherwise the `namespace` attribute, if any, or the enclosing one is prefixed.
    private mutating func define(_ json: JSONValue, kind: AvroNode.Kind, namespace: String) throws(SchemaError) -> (index: Int, namespace: String) {
        guard case .string(let name)? = json["name"] else { throw failure("a \(Self.kindName(kind)) without a \"name\"") }
        var space = namespace
        switch json["namespace"] {
        case .string(let declared)?: space = declared
        case .null?, nil: break
        default: throw failure("the namespace of \(name) is not a string")
        }
        let fullName: String
        if let dot = name.lastIndex(of: ".") {
            fullName = name
            space = String(name[..<dot])
        } else {
            fullName = space.isEmpty ? name : space + "." + name
        }
        let parts = fullName.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.allSatisfy({ Self.isValidName($0) }) else { throw failure("'\(fullName)' is not a valid Avro full name") }
        if let last = parts.last, Self.primitives[String(last)] != nil {
            throw failure("the primitive type name '\(last)' cannot name a \(Self.kindName(kind))")
        }
        guard named[fullName] == nil else { throw failure("the name \(fullName) is defined twice") }
        var node = AvroNode(kind: kind)
        node.fullName = fullName
        let index = append(node)
        named[fullName] = index
        trail.append(fullName)
        return (index, space)
    }

    mutating func record(_ json: JSONValue, namespace: String) throws(SchemaError) -> Int {
        let (index, space) = try define(json, kind: .record, namespace: namespace)
        guard case .array(let fields)? = json["fields"] else { throw failure("a record without a \"fields\" array") }
        var types: [Int] = []
        var names: [String] = []
        for field in fields {
            guard case .string(let name)? = field["name"] else { throw failure("a field without a \"name\"") }
            guard Self.isValidName(Substring(name)) else { throw failure("the field name '\(name)' is not a valid Avro name") }
            guard !names.contains(name) else { throw failure("the field name \(name) is used twice") }
            guard let type = field["type"] else { throw failure("the field \(name) has no \"type\"") }
            trail.append("field \(name)")
            types.append(try parse(type, namespace: space))
            trail.removeLast()
            names.append(name)
        }
        nodes[index].children = types
        nodes[index].names = names
        nodes[index].nameBytes = names.map { Array($0.utf8) }
        trail.removeLast()
        return index
    }

    mutating func enumeration(_ json: JSONValue, namespace: String) throws(SchemaError) -> Int {
        let (index, _) = try define(json, kind: .enumeration, namespace: namespace)
        guard case .array(let symbols)? = json["symbols"] else { throw failure("an enum without a \"symbols\" array") }
        var names: [String] = []
        for symbol in symbols {
            guard case .string(let name) = symbol, Self.isValidName(Substring(name)) else {
                throw failure("the enum symbol \(JSONWriter.string(symbol)) is not a valid Avro name")
            }
            guard !names.contains(name) else { throw failure("the enum symbol \(name) is listed twice") }
            names.append(name)
        }
        nodes[index].names = names
        trail.removeLast()
        return index
    }

    mutating func fixed(_ json: JSONValue, namespace: String) throws(SchemaError) -> Int {
        let (index, _) = try define(json, kind: .fixed, namespace: namespace)
        guard let sizeValue = json["size"] else { throw failure("a fixed without a \"size\"") }
        guard case .int(let declared) = sizeValue, declared >= 0, let size = Int(exactly: declared) else {
            throw failure("a fixed's \"size\" must be a non-negative integer, not \(JSONWriter.string(sizeValue))")
        }
        nodes[index].size = size
        nodes[index].logical = try logicalType(json, kind: .fixed, fixedSize: size)
        trail.removeLast()
        return index
    }

    /// `[A-Za-z_][A-Za-z0-9_]*`, the specification's rule for names, symbols and namespace parts.
    static func isValidName(_ name: Substring) -> Bool {
        guard let first = name.utf8.first else { return false }
        func letter(_ c: UInt8) -> Bool { (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") || c == UInt8(ascii: "_") }
        return letter(first) && name.utf8.allSatisfy { letter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }
    }
}
