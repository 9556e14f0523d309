/// The Protobuf wire types (protobuf.dev/programming-guides/encoding).
enum ProtoWireType {
    static var varint: UInt8 { 0 }
    static var fixed64: UInt8 { 1 }
    static var lengthDelimited: UInt8 { 2 }
    static var startGroup: UInt8 { 3 }
    static var endGroup: UInt8 { 4 }
    static var fixed32: UInt8 { 5 }
}

/// Reads the Protobuf binary encoding from a buffer between `index` and `end`, checking every
/// length against the bytes that remain, so nothing read off the wire can make it read past
/// `end` or allocate more than the input holds.
struct ProtoWireReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int
    /// Where the current message ends (exclusive).
    var end: Int

    /// The deepest group nesting skipped in an unknown field (the same bound as messages).
    static let maxGroupDepth = 64

    init(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) {
        self.bytes = bytes
        self.index = start
        self.end = end
    }

    var atEnd: Bool { index >= end }

    mutating func varint() throws(DecodeFailure) -> UInt64 {
        let start = index
        // The common one-byte case first.
        if index < end, bytes[index] < 0x80 {
            index += 1
            return UInt64(bytes[start])
        }
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard index < end else { throw DecodeFailure("a varint runs past the end of the data", at: start) }
            let byte = bytes[index]
            index += 1
            // The tenth byte carries bit 63 only; anything above it is dropped as protobuf's parsers do.
            result |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return result }
            shift += 7
            guard shift < 70 else { throw DecodeFailure("a varint longer than 10 bytes", at: start) }
        }
    }

    mutating func fixed32() throws(DecodeFailure) -> UInt32 {
        guard end - index >= 4 else { throw DecodeFailure("a 32-bit value runs past the end of the data", at: index) }
        var value: UInt32 = 0
        for i in 0..<4 { value |= UInt32(bytes[index + i]) << (8 * UInt32(i)) }
        index += 4
        return value
    }

    mutating func fixed64() throws(DecodeFailure) -> UInt64 {
        guard end - index >= 8 else { throw DecodeFailure("a 64-bit value runs past the end of the data", at: index) }
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[index + i]) << (8 * UInt64(i)) }
        index += 8
        return value
    }

    /// A length prefix and the range of bytes it covers, which it moves past.
    mutating func lengthDelimited() throws(DecodeFailure) -> Range<Int> {
        let start = index
        let length = try varint()
        guard length <= UInt64(end - index) else {
            throw DecodeFailure("a length of \(length) runs past the end of the data (\(end - index) bytes left)", at: start)
        }
        let range = index..<(index + Int(length))
        index = range.upperBound
        return range
    }

    /// A field's key: its number (1 … 2^29-1) and wire type.
    mutating func tag() throws(DecodeFailure) -> (number: UInt64, wireType: UInt8) {
        let start = index
        let key = try varint()
        let number = key >> 3
        guard number != 0, number < 1 << 29 else { throw DecodeFailure("field number \(number) is not valid", at: start) }
        return (number, UInt8(key & 7))
    }

    /// Moves past a field's value whatever it holds; groups are skipped to their matching end.
    mutating func skip(wireType: UInt8, number: UInt64, at tagStart: Int) throws(DecodeFailure) {
        switch wireType {
        case ProtoWireType.varint: _ = try varint()
        case ProtoWireType.fixed64: _ = try fixed64()
        case ProtoWireType.lengthDelimited: _ = try lengthDelimited()
        case ProtoWireType.fixed32: _ = try fixed32()
        case ProtoWireType.startGroup: try skipGroup(number: number, at: tagStart)
        case ProtoWireType.endGroup: throw DecodeFailure("an end-group tag for field \(number) without its start", at: tagStart)
        default: throw DecodeFailure("wire type \(wireType) of field \(number) does not exist", at: tagStart)
        }
    }

    /// Skips to the end-group tag that closes the group `number` starts; nested groups are
    /// tracked on a bounded stack rather than by recursion.
    private mutating func skipGroup(number: UInt64, at start: Int) throws(DecodeFailure) {
        var open: [UInt64] = [number]
        while let innermost = open.last {
            guard index < end else { throw DecodeFailure("group \(innermost) has no end-group tag", at: start) }
            let tagStart = index
            let (field, wireType) = try tag()
            switch wireType {
            case ProtoWireType.startGroup:
                guard open.count < Self.maxGroupDepth else {
                    throw DecodeFailure("groups nested deeper than \(Self.maxGroupDepth)", at: tagStart)
                }
                open.append(field)
            case ProtoWireType.endGroup:
                guard field == innermost else {
                    throw DecodeFailure("end-group tag \(field) does not close group \(innermost)", at: tagStart)
                }
                open.removeLast()
            default: try skip(wireType: wireType, number: field, at: tagStart)
            }
        }
    }

    /// Checks that `range` is UTF-8, as ``string(_:)`` would, building nothing when it is ASCII.
    func checkString(_ range: Range<Int>) throws(DecodeFailure) {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        for byte in slice where byte >= 0x80 {
            guard String(validating: slice, as: UTF8.self) != nil else {
                throw DecodeFailure("a string that is not valid UTF-8", at: range.lowerBound)
            }
            return
        }
    }

    /// The UTF-8 text in `range`, or an error when it is not valid UTF-8.
    func string(_ range: Range<Int>) throws(DecodeFailure) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        // ASCII (the common case) needs no validation.
        var ascii = true
        for byte in slice where byte >= 0x80 {
            ascii = false
            break
        }
        if ascii { return String(decoding: slice, as: UTF8.self) }
        guard let text = String(validating: slice, as: UTF8.self) else {
            throw DecodeFailure("a string that is not valid UTF-8", at: range.lowerBound)
        }
        return text
    }
}
