/// Moving past a value without building it: for the members an event's mappings never use.
///
/// A skip checks what finding the value's end needs (lengths, union and enum indexes, booleans,
/// depth) and that strings and map keys are UTF-8, as decoding them does: a record that would
/// fail to decode fails whatever the mappings read (an event type no mapping names included).
/// Only an array or map block whose writer gave its byte size is jumped over whole, unread.
extension AvroDecoder {
    mutating func skip(_ n: Int, depth: Int) throws(DecodeFailure) {
        let start = at
        switch nodes[n].kind {
        case .null: return
        case .boolean: _ = try boolean()
        case .int: _ = try int32(.int)
        case .long: _ = try varint(.long)
        case .float: try advance(4, "a float")
        case .double: try advance(8, "a double")
        case .bytes: at += try length(of: "bytes value")
        case .string: _ = try text("string")
        case .fixed:
            guard nodes[n].size <= remaining else { throw DecodeFailure("a fixed of \(nodes[n].size) bytes runs past the end", at: start) }
            at += nodes[n].size
        case .enumeration:
            let index = try int32(.enumIndex)
            guard index >= 0, index < nodes[n].names.count else {
                throw DecodeFailure("enum index \(index) out of range (\(nodes[n].names.count) symbols)", at: start)
            }
        case .union: try skip(try branch(n, start), depth: depth)
        case .record:
            try checkDepth(depth + 1)
            for i in 0..<nodes[n].children.count {
                do {
                    try skip(nodes[n].children[i], depth: depth + 1)
                } catch {
                    throw error.within(nodes[n].names[i])
                }
            }
        case .array: try skipArray(n, depth: depth + 1)
        case .map: try skipMap(n, depth: depth + 1)
        }
    }

    private mutating func skipArray(_ n: Int, depth: Int) throws(DecodeFailure) {
        try checkDepth(depth)
        let item = nodes[n].children[0]
        let itemIsEmpty = nodes[item].isEmpty
        var index = 0
        while true {
            let (count, byteSize) = try blockHeader(itemsTakeBytes: !itemIsEmpty)
            if count == 0 { return }
            if let byteSize {
                at += byteSize
            } else if itemIsEmpty {
                continue  // nothing to read, and the count may be huge: no index to keep
            } else {
                for i in index..<index + count {
                    do {
                        try skip(item, depth: depth)
                    } catch {
                        throw error.within(String(i))
                    }
                }
            }
            // Items that take bytes: at most one per byte, so this cannot overflow.
            if !itemIsEmpty { index += count }
        }
    }

    private mutating func skipMap(_ n: Int, depth: Int) throws(DecodeFailure) {
        try checkDepth(depth)
        let valueType = nodes[n].children[0]
        while true {
            let (count, byteSize) = try blockHeader(itemsTakeBytes: true)
            if count == 0 { return }
            if let byteSize {
                at += byteSize
                continue
            }
            for _ in 0..<count {
                let key = try text("map key")
                do {
                    try skip(valueType, depth: depth)
                } catch {
                    throw error.within(String(decoding: key, as: UTF8.self))
                }
            }
        }
    }
}
