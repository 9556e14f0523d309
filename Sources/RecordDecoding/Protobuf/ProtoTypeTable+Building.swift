import JSON

extension ProtoTypeTable {
    /// Resolves every field's type across `files` (the schema's file and all it imports, the
    /// built-ins included). A type name that names nothing, or names an enum where a message is
    /// declared (or the reverse), is a SchemaError naming the field.
    static func build(main: ProtoFile, imports: [ProtoFile]) throws(SchemaError) -> ProtoTypeTable {
        var builder = Builder()
        for message in main.messages { builder.roots.append(try builder.declare(message, scope: main.package, in: main, depth: 1)) }
        for e in main.enums { try builder.declare(e, scope: main.package, in: main) }
        for file in imports {
            for message in file.messages { _ = try builder.declare(message, scope: file.package, in: file, depth: 1) }
            for e in file.enums { try builder.declare(e, scope: file.package, in: file) }
        }
        var plans: [ProtoMessagePlan] = []
        plans.reserveCapacity(builder.declared.count)
        for index in builder.declared.indices { plans.append(try builder.plan(index)) }
        let enums = builder.enums.map { ProtoEnumPlan(fullName: $0.fullName, values: $0.values) }
        return ProtoTypeTable(messages: plans, enums: enums, roots: builder.roots)
    }
}

private struct Builder {
    struct DeclaredMessage {
        var message: ProtoMessage
        var fullName: String
        var syntax: ProtoFile.Syntax
        /// Declared in one of the well-known types' files.
        var wellKnownFile: Bool
        var nested: [Int] = []
    }

    enum Declaration {
        case message(Int)
        case enumType(Int)
    }

    var declared: [DeclaredMessage] = []
    var enums: [(fullName: String, values: [(name: String, number: Int32)])] = []
    var names: [String: Declaration] = [:]
    var files: [String: String] = [:]
    var roots: [Int] = []

    static let maxNesting = 64
    /// Field numbers below this are found by indexing; larger ones by hashing.
    static let denseLimit: Int32 = 1024

    mutating func declare(_ message: ProtoMessage, scope: String, in file: ProtoFile, depth: Int) throws(SchemaError) -> Int {
        guard depth <= Self.maxNesting else { throw SchemaError("\(file.name): messages nested deeper than \(Self.maxNesting)") }
        let fullName = scope.isEmpty ? message.name : scope + "." + message.name
        try claim(fullName, in: file)
        let index = declared.count
        declared.append(
            DeclaredMessage(
                message: message, fullName: fullName, syntax: file.syntax, wellKnownFile: ProtoWellKnownFiles.paths.contains(file.name)))
        names[fullName] = .message(index)
        var nested: [Int] = []
        for child in message.nestedMessages { nested.append(try declare(child, scope: fullName, in: file, depth: depth + 1)) }
        for e in message.nestedEnums { try declare(e, scope: fullName, in: file) }
        declared[index].nested = nested
        return index
    }

    mutating func declare(_ e: ProtoEnum, scope: String, in file: ProtoFile) throws(SchemaError) {
        let fullName = scope.isEmpty ? e.name : scope + "." + e.name
        try claim(fullName, in: file)
        names[fullName] = .enumType(enums.count)
        enums.append((fullName, e.values))
    }

    private mutating func claim(_ fullName: String, in file: ProtoFile) throws(SchemaError) {
        if let other = files[fullName] {
            throw SchemaError("type \(fullName) is declared twice, in \(other) and in \(file.name)")
        }
        files[fullName] = file.name
    }

    /// The message or enum a field's type name leads to.
    func resolve(_ field: ProtoField, of owner: String) throws(SchemaError) -> Declaration {
        let written = field.typeName ?? ""
        let name = written.hasPrefix(".") ? String(written.dropFirst()) : written
        guard let found = names[name] else {
            throw SchemaError("field \(owner).\(field.name) has type \(written), which no file of the schema declares")
        }
        switch (field.kind, found) {
        case (.message, .message), (.group, .message), (.enum, .enumType): return found
        default:
            throw SchemaError("field \(owner).\(field.name) is declared as \(field.kind) but \(written) is not one")
        }
    }

    func plan(_ index: Int) throws(SchemaError) -> ProtoMessagePlan {
        let declaration = declared[index]
        let owner = declaration.fullName
        let oneofCount = declaration.message.oneofs.count
        var fields: [ProtoFieldPlan] = []
        var names: [String] = []
        var oneofMembers = [[Int]](repeating: [], count: oneofCount)
        var dense: [UInt16] = []
        var sparse: [UInt64: Int] = [:]
        guard declaration.message.fields.count < Int(UInt16.max) else { throw SchemaError("message \(owner) has too many fields") }
        for field in declaration.message.fields {
            var target = -1
            var shape = ProtoFieldPlan.Shape.single
            if field.kind == .message || field.kind == .group || field.kind == .enum {
                switch try resolve(field, of: owner) {
                case .message(let m): target = m
                case .enumType(let e): target = e
                }
            }
            if field.label == .repeated {
                shape = .repeated
                if field.kind == .message, declared[target].message.isMapEntry { shape = try mapShape(field, entry: target, of: owner) }
            }
            var oneof = -1
            if let oneofIndex = field.oneofIndex {
                guard oneofIndex < oneofCount else {
                    throw SchemaError("field \(owner).\(field.name) names oneof \(oneofIndex), which is not declared")
                }
                oneof = oneofIndex
                oneofMembers[oneofIndex].append(fields.count)
            }
            let singularScalar = field.label != .repeated && field.kind != .message && field.kind != .group
            let number = field.number
            guard number >= 1, number < 1 << 29 else { throw SchemaError("field \(owner).\(field.name) has number \(number)") }
            if number < Self.denseLimit {
                if dense.count <= Int(number) { dense += [UInt16](repeating: 0, count: Int(number) + 1 - dense.count) }
                guard dense[Int(number)] == 0 else { throw SchemaError("message \(owner) uses field number \(number) twice") }
                dense[Int(number)] = UInt16(fields.count + 1)
            } else {
                guard sparse.updateValue(fields.count, forKey: UInt64(number)) == nil else {
                    throw SchemaError("message \(owner) uses field number \(number) twice")
                }
            }
            names.append(field.name)
            fields.append(
                ProtoFieldPlan(
                    number: number, kind: field.kind, shape: shape,
                    defaultsWhenAbsent: singularScalar && oneof < 0 && !field.proto3Optional && declaration.syntax == .proto3,
                    target: target, oneof: oneof))
        }
        return ProtoMessagePlan(
            fullName: owner, fields: fields, names: names, denseLookup: dense, sparseLookup: sparse, oneofMembers: oneofMembers,
            nested: declaration.nested, wellKnown: declaration.wellKnownFile ? ProtoWellKnown.of(owner) : nil)
    }

    /// A map field's key and value, from its entry message (`key` = 1, `value` = 2).
    private func mapShape(_ field: ProtoField, entry: Int, of owner: String) throws(SchemaError) -> ProtoFieldPlan.Shape {
        let entryMessage = declared[entry]
        guard let key = entryMessage.message.fields.first(where: { $0.number == 1 }),
            let value = entryMessage.message.fields.first(where: { $0.number == 2 })
        else { throw SchemaError("map entry \(entryMessage.fullName) of \(owner).\(field.name) lacks its key or value field") }
        switch key.kind {
        case .double, .float, .bytes, .message, .group, .enum:
            throw SchemaError("map \(owner).\(field.name) has a key of type \(key.kind), which maps do not allow")
        default: break
        }
        var valueTarget = -1
        if value.kind == .message || value.kind == .group || value.kind == .enum {
            switch try resolve(value, of: entryMessage.fullName) {
            case .message(let m): valueTarget = m
            case .enumType(let e): valueTarget = e
            }
        }
        return .map(key: key.kind, value: value.kind, valueTarget: valueTarget)
    }
}
