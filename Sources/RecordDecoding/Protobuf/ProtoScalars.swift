import ExtrasBase64
import JSON

/// Scalar values and defaults, by the shared table: 32/64-bit integers `.int`; unsigned 64-bit
/// above Int64.max `.bigInteger`; doubles `.double` (NaN and infinities as the strings "NaN",
/// "Infinity", "-Infinity"); floats through their shortest text, so 11.8f reads 11.8; bytes as
/// padded standard base64; enums by symbol, or `.int` for a number with no symbol.
extension ProtoMessageDecoder {
    /// The wire type a field of `kind` is written with (unpacked).
    static func wireType(of kind: ProtoField.Kind) -> UInt8 {
        switch kind {
        case .int32, .int64, .uint32, .uint64, .sint32, .sint64, .bool, .enum: ProtoWireType.varint
        case .fixed64, .sfixed64, .double: ProtoWireType.fixed64
        case .fixed32, .sfixed32, .float: ProtoWireType.fixed32
        case .string, .bytes, .message: ProtoWireType.lengthDelimited
        case .group: ProtoWireType.startGroup
        }
    }

    /// Whether a repeated field of `kind` may be packed (every scalar that is not length-delimited).
    static func isPackable(_ kind: ProtoField.Kind) -> Bool {
        switch kind {
        case .string, .bytes, .message, .group: false
        default: true
        }
    }

    /// Reads one value of a scalar or enum `kind` (`target`: the enum's index).
    func scalar(_ kind: ProtoField.Kind, _ target: Int, _ reader: inout ProtoWireReader) throws(DecodeFailure) -> JSONValue {
        switch kind {
        case .int32: return .int(Int64(Int32(truncatingIfNeeded: try reader.varint())))
        case .int64: return .int(Int64(bitPattern: try reader.varint()))
        case .uint32: return .int(Int64(UInt32(truncatingIfNeeded: try reader.varint())))
        case .uint64: return Self.unsigned(try reader.varint())
        case .sint32:
            let n = UInt32(truncatingIfNeeded: try reader.varint())
            return .int(Int64(Int32(bitPattern: (n >> 1) ^ (0 &- (n & 1)))))
        case .sint64:
            let n = try reader.varint()
            return .int(Int64(bitPattern: (n >> 1) ^ (0 &- (n & 1))))
        case .bool: return .bool(try reader.varint() != 0)
        case .enum: return types.enums[target].value(Int32(truncatingIfNeeded: try reader.varint()))
        case .fixed32: return .int(Int64(try reader.fixed32()))
        case .sfixed32: return .int(Int64(Int32(bitPattern: try reader.fixed32())))
        case .fixed64: return Self.unsigned(try reader.fixed64())
        case .sfixed64: return .int(Int64(bitPattern: try reader.fixed64()))
        case .float: return Self.float(Float(bitPattern: try reader.fixed32()))
        case .double: return Self.double(Double(bitPattern: try reader.fixed64()))
        case .string: return .string(try reader.string(reader.lengthDelimited()))
        case .bytes: return .string(Base64.encodeToString(bytes: UnsafeBufferPointer(rebasing: bytes[try reader.lengthDelimited()])))
        case .message, .group: throw DecodeFailure("a \(kind) where a scalar was expected", at: reader.index)
        }
    }

    /// proto3's default for a field of `kind` that is absent.
    func defaultValue(_ kind: ProtoField.Kind, _ target: Int) -> JSONValue {
        switch kind {
        case .int32, .int64, .uint32, .uint64, .sint32, .sint64, .fixed32, .fixed64, .sfixed32, .sfixed64: .int(0)
        case .float, .double: .double(0)
        case .bool: .bool(false)
        case .string, .bytes: .string("")
        case .enum: types.enums[target].defaultValue
        case .message, .group: .object([])
        }
    }

    static func unsigned(_ value: UInt64) -> JSONValue {
        value <= UInt64(Int64.max) ? .int(Int64(value)) : .bigInteger(String(value))
    }

    static func double(_ value: Double) -> JSONValue {
        if value.isNaN { return .string("NaN") }
        if value.isInfinite { return .string(value < 0 ? "-Infinity" : "Infinity") }
        return .double(value)
    }

    static func float(_ value: Float) -> JSONValue {
        if value.isNaN { return .string("NaN") }
        if value.isInfinite { return .string(value < 0 ? "-Infinity" : "Infinity") }
        // The shortest text that reads back as the same float, read as a double: 11.8f is 11.8,
        // not 11.800000190734863.
        return .double(Double(String(value)) ?? Double(value))
    }
}
