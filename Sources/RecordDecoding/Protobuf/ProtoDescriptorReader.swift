/// Reads a serialized `google.protobuf.FileDescriptorProto` (what confluent-kafka's serializers
/// register, base64-encoded, and what Confluent's registry returns for `?format=serialized`)
/// into a ``ProtoFile``, with our own wire reader.
///
/// Field numbers, from `google/protobuf/descriptor.proto`:
/// - FileDescriptorProto: name 1, package 2, dependency 3, message_type 4, enum_type 5,
///   options 8 (skipped), syntax 12 (absent means proto2).
/// - DescriptorProto: name 1, field 2, nested_type 3, enum_type 4, options 7 (MessageOptions:
///   map_entry 7), oneof_decl 8 (OneofDescriptorProto: name 1).
/// - FieldDescriptorProto: name 1, number 3, label 4, type 5, type_name 6, options 8
///   (FieldOptions: packed 2), oneof_index 9, proto3_optional 17.
/// - EnumDescriptorProto: name 1, value 2 (EnumValueDescriptorProto: name 1, number 2).
///
/// Every other field (services, extensions, reserved ranges, source info, json_name, …) is
/// skipped. Type names stay as written (protoc writes them fully qualified with a leading dot);
/// ``ProtobufSchema`` resolves them.
public enum ProtoDescriptorReader {
    /// The deepest nesting of message declarations read (the decoder's bound too).
    static let maxNesting = 64

    public static func read(_ bytes: [UInt8]) throws(SchemaError) -> ProtoFile {
        do {
            return try bytes.withUnsafeBufferPointer { (buffer) throws(DecodeFailure) -> ProtoFile in
                var reader = ProtoWireReader(buffer, from: 0, to: buffer.count)
                return try file(&reader)
            }
        } catch {
            throw SchemaError(
                "serialized FileDescriptorProto\(error.pointer.isEmpty ? "" : " " + error.pointer): \(error.reason) at byte \(error.offset)")
        }
    }

    private static func file(_ r: inout ProtoWireReader) throws(DecodeFailure) -> ProtoFile {
        var result = ProtoFile(name: "", syntax: .proto2)
        var syntax = ""
        while !r.atEnd {
            let start = r.index
            let (number, wire) = try r.tag()
            switch number {
            case 1: result.name = try string(&r, wire, start)
            case 2: result.package = try string(&r, wire, start)
            case 3: result.dependencies.append(try string(&r, wire, start))
            case 4:
                var sub = try submessage(&r, wire, start)
                result.messages.append(try message(&sub, depth: 1))
            case 5:
                var sub = try submessage(&r, wire, start)
                result.enums.append(try enumType(&sub))
            case 12: syntax = try string(&r, wire, start)
            default: try r.skip(wireType: wire, number: number, at: start)
            }
        }
        switch syntax {
        case "", "proto2": result.syntax = .proto2
        case "proto3": result.syntax = .proto3
        case "editions": result.syntax = .editions
        default: throw DecodeFailure("syntax \"\(syntax)\" is not proto2, proto3 or editions", at: r.index)
        }
        return result
    }

    private static func message(_ r: inout ProtoWireReader, depth: Int) throws(DecodeFailure) -> ProtoMessage {
        guard depth <= maxNesting else { throw DecodeFailure("messages nested deeper than \(maxNesting)", at: r.index) }
        let begin = r.index
        var result = ProtoMessage(name: "")
        do {
            while !r.atEnd {
                let start = r.index
                let (number, wire) = try r.tag()
                switch number {
                case 1: result.name = try string(&r, wire, start)
                case 2:
                    var sub = try submessage(&r, wire, start)
                    result.fields.append(try field(&sub))
                case 3:
                    var sub = try submessage(&r, wire, start)
                    result.nestedMessages.append(try message(&sub, depth: depth + 1))
                case 4:
                    var sub = try submessage(&r, wire, start)
                    result.nestedEnums.append(try enumType(&sub))
                case 7:
                    var sub = try submessage(&r, wire, start)
                    if let mapEntry = try boolOption(&sub, number: 7) { result.isMapEntry = mapEntry }
                case 8:
                    var sub = try submessage(&r, wire, start)
                    result.oneofs.append(try nameOnly(&sub))
                default: try r.skip(wireType: wire, number: number, at: start)
                }
            }
        } catch {
            throw result.name.isEmpty ? error : error.within(result.name)
        }
        guard !result.name.isEmpty else { throw DecodeFailure("a message without a name", at: begin) }
        return result
    }

    private static func field(_ r: inout ProtoWireReader) throws(DecodeFailure) -> ProtoField {
        let begin = r.index
        var name = ""
        var number: Int32 = 0
        var label = 1
        var type = 0
        var typeName: String?
        var oneofIndex: Int?
        var proto3Optional = false
        var packed: Bool?
        while !r.atEnd {
            let start = r.index
            let (tag, wire) = try r.tag()
            switch tag {
            case 1: name = try string(&r, wire, start)
            case 3: number = Int32(truncatingIfNeeded: try varint(&r, wire, start))
            case 4: label = Int(Int32(truncatingIfNeeded: try varint(&r, wire, start)))
            case 5: type = Int(Int32(truncatingIfNeeded: try varint(&r, wire, start)))
            case 6: typeName = try string(&r, wire, start)
            case 8:
                var sub = try submessage(&r, wire, start)
                packed = try boolOption(&sub, number: 2) ?? packed
            case 9: oneofIndex = Int(Int32(truncatingIfNeeded: try varint(&r, wire, start)))
            case 17: proto3Optional = try varint(&r, wire, start) != 0
            default: try r.skip(wireType: wire, number: tag, at: start)
            }
        }
        guard !name.isEmpty else { throw DecodeFailure("a field without a name", at: begin) }
        guard number >= 1, number < 1 << 29 else { throw DecodeFailure("field \(name) has number \(number)", at: begin) }
        guard let labelValue = ProtoField.Label(rawValue: label) else {
            throw DecodeFailure("field \(name) has label \(label)", at: begin)
        }
        guard let kind = ProtoField.Kind(rawValue: type) else {
            throw DecodeFailure("field \(name) has type \(type)", at: begin)
        }
        if kind == .message || kind == .enum || kind == .group, typeName?.isEmpty ?? true {
            throw DecodeFailure("field \(name) has no type name", at: begin)
        }
        if let oneofIndex, oneofIndex < 0 { throw DecodeFailure("field \(name) has oneof index \(oneofIndex)", at: begin) }
        return ProtoField(
            name: name, number: number, label: labelValue, kind: kind, typeName: typeName, oneofIndex: oneofIndex,
            proto3Optional: proto3Optional, packed: packed)
    }

    private static func enumType(_ r: inout ProtoWireReader) throws(DecodeFailure) -> ProtoEnum {
        let begin = r.index
        var result = ProtoEnum(name: "", values: [])
        while !r.atEnd {
            let start = r.index
            let (number, wire) = try r.tag()
            switch number {
            case 1: result.name = try string(&r, wire, start)
            case 2:
                var sub = try submessage(&r, wire, start)
                var symbol = ""
                var value: Int32 = 0
                while !sub.atEnd {
                    let at = sub.index
                    let (tag, type) = try sub.tag()
                    switch tag {
                    case 1: symbol = try string(&sub, type, at)
                    case 2: value = Int32(truncatingIfNeeded: try varint(&sub, type, at))
                    default: try sub.skip(wireType: type, number: tag, at: at)
                    }
                }
                guard !symbol.isEmpty else { throw DecodeFailure("an enum value without a name", at: start) }
                result.values.append((symbol, value))
            default: try r.skip(wireType: wire, number: number, at: start)
            }
        }
        guard !result.name.isEmpty else { throw DecodeFailure("an enum without a name", at: begin) }
        return result
    }

    // MARK: Field readers

    /// The `name` (field 1) of a OneofDescriptorProto.
    private static func nameOnly(_ r: inout ProtoWireReader) throws(DecodeFailure) -> String {
        var name = ""
        while !r.atEnd {
            let start = r.index
            let (number, wire) = try r.tag()
            if number == 1 { name = try string(&r, wire, start) } else { try r.skip(wireType: wire, number: number, at: start) }
        }
        return name
    }

    /// The bool field `number` of an options message, or nil when it is not there.
    private static func boolOption(_ r: inout ProtoWireReader, number wanted: UInt64) throws(DecodeFailure) -> Bool? {
        var value: Bool?
        while !r.atEnd {
            let start = r.index
            let (number, wire) = try r.tag()
            if number == wanted { value = try varint(&r, wire, start) != 0 } else { try r.skip(wireType: wire, number: number, at: start) }
        }
        return value
    }

    private static func string(_ r: inout ProtoWireReader, _ wire: UInt8, _ start: Int) throws(DecodeFailure) -> String {
        guard wire == ProtoWireType.lengthDelimited else { throw wrongWire(wire, start) }
        return try r.string(r.lengthDelimited())
    }

    private static func varint(_ r: inout ProtoWireReader, _ wire: UInt8, _ start: Int) throws(DecodeFailure) -> UInt64 {
        guard wire == ProtoWireType.varint else { throw wrongWire(wire, start) }
        return try r.varint()
    }

    private static func submessage(_ r: inout ProtoWireReader, _ wire: UInt8, _ start: Int) throws(DecodeFailure) -> ProtoWireReader {
        guard wire == ProtoWireType.lengthDelimited else { throw wrongWire(wire, start) }
        let range = try r.lengthDelimited()
        return ProtoWireReader(r.bytes, from: range.lowerBound, to: range.upperBound)
    }

    private static func wrongWire(_ wire: UInt8, _ start: Int) -> DecodeFailure {
        DecodeFailure("wire type \(wire) where descriptor.proto has another", at: start)
    }
}
