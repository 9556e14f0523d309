import JSON

/// Decodes Avro binary straight from the record's bytes with an index, building ``JSONValue``s
/// only for what the caller keeps (`AvroDecoder+Skip.swift` moves past the rest).
///
/// Depth counts records, arrays and maps (unions add none: a union cannot hold a union), and
/// stops at ``AvroLimits/maxDepth``.
struct AvroDecoder {
    let bytes: UnsafeBufferPointer<UInt8>
    let nodes: UnsafeBufferPointer<AvroNode>
    var at: Int
    /// How many more zero-byte array items this decode may build.
    var emptyItemsLeft = AvroLimits.maxEmptyItems

    init(bytes: UnsafeBufferPointer<UInt8>, nodes: UnsafeBufferPointer<AvroNode>, at: Int) {
        self.bytes = bytes
        self.nodes = nodes
        self.at = at
    }

    /// The value of type `n` at `at`, keeping `paths` of it.
    mutating func value(_ n: Int, _ paths: JSONPathSet, depth: Int) throws(DecodeFailure) -> JSONValue {
        let start = at
        switch nodes[n].kind {
        case .null: return .null
        case .boolean: return .bool(try boolean())
        case .int:
            let value = try int32(.int)
            switch nodes[n].logical {
            case .date: return .string(AvroTime.date(days: value))
            case .timeMillis: return .string(try timeOfDay(value, perSecond: 1_000, start))
            default: return .int(value)
            }
        case .long:
            let value = try varint(.long)
            switch nodes[n].logical {
            case .timestampMillis: return .string(AvroTime.timestamp(value, perSecond: 1_000, utc: true))
            case .timestampMicros: return .string(AvroTime.timestamp(value, perSecond: 1_000_000, utc: true))
            case .localTimestampMillis: return .string(AvroTime.timestamp(value, perSecond: 1_000, utc: false))
            case .localTimestampMicros: return .string(AvroTime.timestamp(value, perSecond: 1_000_000, utc: false))
            case .timeMicros: return .string(try timeOfDay(value, perSecond: 1_000_000, start))
            default: return .int(value)
            }
        case .float: return Self.number(try float())
        case .double: return Self.number(try double())
        case .string: return .string(String(decoding: try text("string"), as: UTF8.self))
        case .bytes: return try binary(count: try length(of: "bytes value"), nodes[n].logical, start)
        case .fixed:
            guard nodes[n].size <= remaining else { throw DecodeFailure("a fixed of \(nodes[n].size) bytes runs past the end", at: start) }
            return try binary(count: nodes[n].size, nodes[n].logical, start)
        case .enumeration:
            let index = try int32(.enumIndex)
            guard index >= 0, index < nodes[n].names.count else {
                throw DecodeFailure("enum index \(index) out of range (\(nodes[n].names.count) symbols)", at: start)
            }
            return .string(nodes[n].names[Int(index)])
        case .union: return try value(try branch(n, start), paths, depth: depth)
        case .record: return try record(n, paths, depth: depth + 1)
        case .array: return try array(n, depth: depth + 1)
        case .map: return try map(n, paths, depth: depth + 1)
        }
    }

    /// The union branch whose index comes next.
    mutating func branch(_ n: Int, _ start: Int) throws(DecodeFailure) -> Int {
        let index = try int32(.unionIndex)
        guard index >= 0, index < nodes[n].children.count else {
            throw DecodeFailure("union branch index \(index) out of range (\(nodes[n].children.count) branches)", at: start)
        }
        return nodes[n].children[Int(index)]
    }

    /// A record's fields in declaration order; those not in `paths` are skipped.
    private mutating func record(_ n: Int, _ paths: JSONPathSet, depth: Int) throws(DecodeFailure) -> JSONValue {
        try checkDepth(depth)
        let count = nodes[n].children.count
        var members: [(key: String, value: JSONValue)] = []
        if paths.whole {
            members.reserveCapacity(min(count, 1_024))
            for i in 0..<count {
                do {
                    members.append((nodes[n].names[i], try value(nodes[n].children[i], paths, depth: depth)))
                } catch {
                    throw error.within(nodes[n].names[i])
                }
            }
            return .object(members)
        }
        for i in 0..<count {
            let wanted = nodes[n].nameBytes[i].withUnsafeBufferPointer { paths.member($0) }
            do {
                if let wanted {
                    members.append((nodes[n].names[i], try value(nodes[n].children[i], wanted, depth: depth)))
                } else {
                    try skip(nodes[n].children[i], depth: depth)
                }
            } catch {
                throw error.within(nodes[n].names[i])
            }
        }
        return .object(members)
    }

    /// An array is kept whole, as the JSON parser keeps one on a kept path.
    private mutating func array(_ n: Int, depth: Int) throws(DecodeFailure) -> JSONValue {
        try checkDepth(depth)
        let item = nodes[n].children[0]
        let itemIsEmpty = nodes[item].isEmpty
        let all = JSONPathSet.all
        var items: [JSONValue] = []
        while true {
            let start = at
            let (count, byteSize) = try blockHeader(itemsTakeBytes: !itemIsEmpty)
            if count == 0 { return .array(items) }
            if itemIsEmpty { try spendEmptyItems(count, start) }
            // Bounded: a count is only a claim of the bytes, and arrays nest.
            if items.isEmpty { items.reserveCapacity(min(count, 1_024)) }
            let blockStart = at
            for _ in 0..<count {
                do {
                    items.append(try value(item, all, depth: depth))
                } catch {
                    throw error.within(String(items.count))
                }
            }
            try checkBlock(byteSize, from: blockStart)
        }
    }

    /// A map's entries in the order written; when `paths` is not whole, only the keys it names.
    private mutating func map(_ n: Int, _ paths: JSONPathSet, depth: Int) throws(DecodeFailure) -> JSONValue {
        try checkDepth(depth)
        let valueType = nodes[n].children[0]
        var members: [(key: String, value: JSONValue)] = []
        while true {
            let (count, byteSize) = try blockHeader(itemsTakeBytes: true)
            if count == 0 { return .object(members) }
            let blockStart = at
            for _ in 0..<count {
                let key = try text("map key")
                let wanted = paths.whole ? paths : paths.member(key)
                let name = wanted == nil ? "" : String(decoding: key, as: UTF8.self)
                do {
                    if let wanted {
                        members.append((name, try value(valueType, wanted, depth: depth)))
                    } else {
                        try skip(valueType, depth: depth)
                    }
                } catch {
                    throw error.within(String(decoding: key, as: UTF8.self))
                }
            }
            try checkBlock(byteSize, from: blockStart)
        }
    }

    /// A block whose writer gave its size must have taken exactly that many bytes.
    func checkBlock(_ byteSize: Int?, from blockStart: Int) throws(DecodeFailure) {
        if let byteSize, at - blockStart != byteSize {
            throw DecodeFailure("a block said it held \(byteSize) bytes but its items took \(at - blockStart)", at: blockStart)
        }
    }
}
