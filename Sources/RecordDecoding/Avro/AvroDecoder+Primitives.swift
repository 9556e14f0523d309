/// What a varint is read as, for messages ("an int runs past the end").
enum AvroVarintRole {
    case int, long, length, blockCount, blockSize, unionIndex, enumIndex

    var noun: String {
        switch self {
        case .int: "an int"
        case .long: "a long"
        case .length: "a length"
        case .blockCount: "a block count"
        case .blockSize: "a block byte size"
        case .unionIndex: "a union branch index"
        case .enumIndex: "an enum index"
        }
    }
}

/// The encodings every value is made of: zigzag varints, lengths, little-endian floats, and
/// the headers of array and map blocks. Each checks the bytes that remain before reading.
extension AvroDecoder {
    var remaining: Int { bytes.count - at }

    /// A zigzag varint of at most 10 bytes whose value fits in 64 bits.
    mutating func varint(_ role: AvroVarintRole) throws(DecodeFailure) -> Int64 {
        let start = at
        guard at < bytes.count else { throw DecodeFailure("\(role.noun) runs past the end", at: start) }
        var byte = bytes[at]
        at += 1
        if byte < 0x80 { return Int64(byte >> 1) ^ -Int64(byte & 1) }
        var raw = UInt64(byte & 0x7f)
        var shift: UInt64 = 7
        repeat {
            guard at < bytes.count else { throw DecodeFailure("\(role.noun) runs past the end", at: start) }
            byte = bytes[at]
            at += 1
            // The tenth byte holds the 64th bit only.
            if shift == 63, byte > 1 {
                throw DecodeFailure(byte & 0x80 != 0 ? "\(role.noun) longer than 10 bytes" : "\(role.noun) beyond 64 bits", at: start)
            }
            raw |= UInt64(byte & 0x7f) << shift
            shift += 7
        } while byte & 0x80 != 0
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// An Avro int: a varint whose value fits in 32 bits.
    mutating func int32(_ role: AvroVarintRole) throws(DecodeFailure) -> Int64 {
        let start = at
        let value = try varint(role)
        guard value >= Int64(Int32.min), value <= Int64(Int32.max) else { throw DecodeFailure("\(role.noun) of \(value) beyond 32 bits", at: start) }
        return value
    }

    /// The length of a string, bytes or map key, checked against the bytes that remain.
    mutating func length(of what: StaticString) throws(DecodeFailure) -> Int {
        let start = at
        let count = try varint(.length)
        guard count >= 0 else { throw DecodeFailure("a \(what) with the negative length \(count)", at: start) }
        guard count <= Int64(remaining) else { throw DecodeFailure("a \(what) of \(count) bytes runs past the end", at: start) }
        return Int(count)
    }

    /// A string or map key (`what`), checked to be UTF-8 and moved past: the same check
    /// whether the value is built or skipped, so a record fails alike whatever a mapping reads.
    @inline(__always)  // a call per string cost 240 instructions of the bench's Avro event
    mutating func text(_ what: StaticString) throws(DecodeFailure) -> UnsafeBufferPointer<UInt8> {
        let start = at
        let count = try length(of: what)
        let text = UnsafeBufferPointer(rebasing: bytes[at..<at + count])
        guard AvroUTF8.isValid(text) else { throw DecodeFailure("a \(what) that is not valid UTF-8", at: start) }
        at += count
        return text
    }

    /// Moves past `count` bytes of a fixed-size value.
    mutating func advance(_ count: Int, _ what: StaticString) throws(DecodeFailure) {
        guard count <= remaining else { throw DecodeFailure("\(what) runs past the end", at: at) }
        at += count
    }

    mutating func boolean() throws(DecodeFailure) -> Bool {
        guard at < bytes.count else { throw DecodeFailure("a boolean runs past the end", at: at) }
        let byte = bytes[at]
        guard byte <= 1 else { throw DecodeFailure("a boolean byte \(byte) that is neither 0 nor 1", at: at) }
        at += 1
        return byte == 1
    }

    mutating func float() throws(DecodeFailure) -> Float {
        guard remaining >= 4 else { throw DecodeFailure("a float runs past the end", at: at) }
        var bits: UInt32 = 0
        for i in 0..<4 { bits |= UInt32(bytes[at + i]) << (8 * i) }
        at += 4
        return Float(bitPattern: bits)
    }

    mutating func double() throws(DecodeFailure) -> Double {
        guard remaining >= 8 else { throw DecodeFailure("a double runs past the end", at: at) }
        var bits: UInt64 = 0
        for i in 0..<8 { bits |= UInt64(bytes[at + i]) << (8 * i) }
        at += 8
        return Double(bitPattern: bits)
    }

    /// The header of an array or map block: how many items, and the block's size in bytes when
    /// the writer gave one (a negative count is followed by it). When every item takes at least
    /// a byte, a count above the bytes that remain fails here, before anything is reserved.
    mutating func blockHeader(itemsTakeBytes: Bool) throws(DecodeFailure) -> (count: Int, byteSize: Int?) {
        let start = at
        var count = try varint(.blockCount)
        var byteSize: Int?
        if count < 0 {
            guard count != .min else { throw DecodeFailure("a block count of \(count)", at: start) }
            count = -count
            let sizeStart = at
            let size = try varint(.blockSize)
            guard size >= 0, size <= Int64(remaining) else {
                throw DecodeFailure("a block byte size of \(size) that is negative or runs past the end", at: sizeStart)
            }
            byteSize = Int(size)
        }
        if itemsTakeBytes, count > Int64(remaining) {
            throw DecodeFailure("a block of \(count) items, more than the \(remaining) bytes that remain", at: start)
        }
        return (Int(count), byteSize)
    }

    /// Takes `count` from what this decode may still build of zero-byte items.
    mutating func spendEmptyItems(_ count: Int, _ start: Int) throws(DecodeFailure) {
        guard count <= emptyItemsLeft else {
            throw DecodeFailure("more than \(AvroLimits.maxEmptyItems) array items of a type that takes no bytes", at: start)
        }
        emptyItemsLeft -= count
    }

    func checkDepth(_ depth: Int) throws(DecodeFailure) {
        guard depth <= AvroLimits.maxDepth else { throw DecodeFailure("nesting deeper than \(AvroLimits.maxDepth) levels", at: at) }
    }
}
