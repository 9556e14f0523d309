import JSON

/// Reads Avro schema JSON (specification 1.11) into the flat ``AvroNode`` table, resolving
/// every type name as it goes.
///
/// One parser reads the references first and then the schema itself, so the names the
/// references define are there for the schema to use, exactly as Confluent's schema references
/// work. Names are resolved when they are read: a name can refer to a type defined earlier, or
/// to a record that is still being read (its own fields), which is how recursion is written.
struct AvroSchemaParser {
    var nodes: [AvroNode]
    /// Full name → the node of that named type.
    var named: [String: Int] = [:]
    /// Where the parser is (named types, fields, "items", "values", union branches), for messages.
    var trail: [String] = []

    static let primitives: [String: AvroNode.Kind] = [
        "null": .null, "boolean": .boolean, "int": .int, "long": .long,
        "float": .float, "double": .double, "bytes": .bytes, "string": .string,
    ]

    /// The primitives without a logical type are shared nodes whose index is their kind's raw value.
    init() {
        nodes = (0...AvroNode.Kind.string.rawValue).compactMap { AvroNode.Kind(rawValue: $0).map { AvroNode(kind: $0) } }
    }

    /// Parses one schema document; `label` says which (a reference) in messages.
    mutating func parseDocument(_ text: String, label: String?) throws(SchemaError) -> Int {
        trail = label.map { [$0] } ?? []
        let json: JSONValue
        do {
            json = try JSONParser.parse(text)
        } catch {
            throw failure("the schema is not JSON: \(error)")
        }
        return try parse(json, namespace: "")
    }

    /// The error for `reason` at the current place.
    func failure(_ reason: String) -> SchemaError {
        trail.isEmpty ? SchemaError("Avro schema: \(reason)") : SchemaError("Avro schema at \(trail.joined(separator: " > ")): \(reason)")
    }

    /// Any schema: a type name, a union (a JSON array) or a schema object. `namespace` is the
    /// one of the innermost enclosing named type, which unqualified names inherit.
    mutating func parse(_ json: JSONValue, namespace: String) throws(SchemaError) -> Int {
        switch json {
        case .string(let name): return try reference(name, namespace: namespace)
        case .array(let branches): return try union(branches, namespace: namespace)
        case .object: return try object(json, namespace: namespace)
        default: throw failure("a schema must be a type name, an object or a union array, not a JSON \(json.typeName)")
        }
    }

    /// A primitive type name or a previously defined named type. An unqualified name is looked
    /// up in the enclosing namespace first, then in the null namespace (as Java's parser does).
    func reference(_ name: String, namespace: String) throws(SchemaError) -> Int {
        if let kind = Self.primitives[name] { return Int(kind.rawValue) }
        if !name.contains("."), !namespace.isEmpty, let index = named[namespace + "." + name] { return index }
        if let index = named[name] { return index }
        throw failure("unknown type name '\(name)'")
    }

    private mutating func object(_ json: JSONValue, namespace: String) throws(SchemaError) -> Int {
        guard let type = json["type"] else { throw failure("a schema object without a \"type\"") }
        guard case .string(let typeName) = type else {
            // {"type": {...}} or {"type": [...]}: the nested schema is the type, as a field's is.
            return try parse(type, namespace: namespace)
        }
        switch typeName {
        case "record", "error": return try record(json, namespace: namespace)
        case "enum": return try enumeration(json, namespace: namespace)
        case "fixed": return try fixed(json, namespace: namespace)
        case "array": return try container(.array, json, member: "items", namespace: namespace)
        case "map": return try container(.map, json, member: "values", namespace: namespace)
        default:
            guard let kind = Self.primitives[typeName] else { return try reference(typeName, namespace: namespace) }
            let logical = try logicalType(json, kind: kind, fixedSize: 0)
            if logical == .none { return Int(kind.rawValue) }
            return append(AvroNode(kind: kind, logical: logical))
        }
    }

    /// An array (`items`) or a map (`values`).
    private mutating func container(_ kind: AvroNode.Kind, _ json: JSONValue, member: String, namespace: String) throws(SchemaError) -> Int {
        guard let element = json[member] else { throw failure("\(kind == .array ? "an array" : "a map") without \"\(member)\"") }
        trail.append(member)
        let child = try parse(element, namespace: namespace)
        trail.removeLast()
        var node = AvroNode(kind: kind)
        node.children = [child]
        return append(node)
    }

    /// A union: no branch may be a union itself, and no two branches may be of the same type
    /// (named types count by full name), as the specification requires.
    private mutating func union(_ branches: [JSONValue], namespace: String) throws(SchemaError) -> Int {
        var children: [Int] = []
        var seen: Set<String> = []
        for (i, branch) in branches.enumerated() {
            trail.append("union branch \(i)")
            if case .array = branch { throw failure("a union inside a union") }
            let child = try parse(branch, namespace: namespace)
            guard nodes[child].kind != .union else { throw failure("a union inside a union") }
            let key = nodes[child].fullName ?? Self.kindName(nodes[child].kind)
            guard seen.insert(key).inserted else { throw failure("a second union branch of type \(key)") }
            trail.removeLast()
            children.append(child)
        }
        var node = AvroNode(kind: .union)
        node.children = children
        return append(node)
    }

    mutating func append(_ node: AvroNode) -> Int {
        nodes.append(node)
        return nodes.count - 1
    }

    static func kindName(_ kind: AvroNode.Kind) -> String {
        switch kind {
        case .null: "null"
        case .boolean: "boolean"
        case .int: "int"
        case .long: "long"
        case .float: "float"
        case .double: "double"
        case .bytes: "bytes"
        case .string: "string"
        case .record: "record"
        case .enumeration: "enum"
        case .array: "array"
        case .map: "map"
        case .union: "union"
        case .fixed: "fixed"
        }
    }

    /// Marks the types that always encode in zero bytes: null, a fixed of size 0, and records
    /// whose fields are all such. Found as a least fixed point, so a record that can only
    /// contain itself (which has no finite encoding) is not marked.
    mutating func markEmptyTypes() {
        for i in nodes.indices {
            nodes[i].isEmpty = nodes[i].kind == .null || (nodes[i].kind == .fixed && nodes[i].size == 0)
        }
        var changed = true
        while changed {
            changed = false
            for i in nodes.indices where nodes[i].kind == .record && !nodes[i].isEmpty {
                if nodes[i].children.allSatisfy({ nodes[$0].isEmpty }) {
                    nodes[i].isEmpty = true
                    changed = true
                }
            }
        }
    }
}
