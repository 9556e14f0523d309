import ExtrasBase64
import Testing

@testable import RecordDecoding

/// Writes Protobuf wire bytes, for the inputs no client writes: broken descriptors, records
/// with a wrong wire type, nesting past the limit.
struct ProtoTestEncoder {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func tag(_ number: Int, _ wireType: UInt8) { varint(UInt64(number) << 3 | UInt64(wireType)) }

    mutating func string(_ number: Int, _ text: String) { bytes(number, Array(text.utf8)) }

    mutating func bytes(_ number: Int, _ content: [UInt8]) {
        tag(number, 2)
        varint(UInt64(content.count))
        bytes += content
    }

    mutating func varint(_ number: Int, _ value: UInt64) {
        tag(number, 0)
        varint(value)
    }

    /// A FieldDescriptorProto.
    static func field(_ name: String, _ number: Int, type: Int, label: Int = 1, typeName: String? = nil) -> [UInt8] {
        var e = ProtoTestEncoder()
        e.string(1, name)
        e.varint(3, UInt64(number))
        e.varint(4, UInt64(label))
        e.varint(5, UInt64(type))
        if let typeName { e.string(6, typeName) }
        return e.bytes
    }

    /// A DescriptorProto with these fields.
    static func message(_ name: String, _ fields: [[UInt8]]) -> [UInt8] {
        var e = ProtoTestEncoder()
        e.string(1, name)
        for field in fields { e.bytes(2, field) }
        return e.bytes
    }

    /// A FileDescriptorProto, base64 as a registry hands it over.
    static func file(_ name: String, package: String = "t", imports: [String] = [], messages: [[UInt8]], syntax: String = "proto3") -> String {
        var e = ProtoTestEncoder()
        e.string(1, name)
        e.string(2, package)
        for path in imports { e.string(3, path) }
        for message in messages { e.bytes(4, message) }
        e.string(12, syntax)
        return Base64.encodeToString(bytes: e.bytes)
    }
}

@Suite struct ProtoDescriptorReaderTests {
    func fixture(_ subject: String) throws -> ProtoFile {
        try ProtoDescriptorReader.read(try descriptorBytes(subject))
    }

    @Test func readsWhatProtocWrote() throws {
        let file = try fixture("orders-value")
        #expect(file.name == "acme/orders.proto")
        #expect(file.package == "acme.orders")
        #expect(file.syntax == .proto3)
        #expect(file.dependencies.first == "acme/common.proto")
        #expect(file.dependencies.contains("google/protobuf/timestamp.proto"))
        #expect(file.messages.map(\.name) == ["OrderPlaced", "OrderShipped", "WellKnown"])
        #expect(file.enums == [ProtoEnum(name: "Status", values: [("STATUS_UNSPECIFIED", 0), ("PLACED", 1), ("SHIPPED", 2)])])

        let order = file.messages[0]
        #expect(order.nestedMessages.map(\.name) == ["Line", "AttributesEntry", "LinesByNoEntry"])
        #expect(order.nestedMessages.map(\.isMapEntry) == [false, true, true])
        #expect(order.oneofs == ["contact", "_coupon"])
        let fields = Dictionary(uniqueKeysWithValues: order.fields.map { ($0.name, $0) })
        #expect(fields["lines"] == ProtoField(name: "lines", number: 3, label: .repeated, kind: .message, typeName: ".acme.orders.OrderPlaced.Line"))
        #expect(fields["status"]?.kind == .enum)
        #expect(fields["email"]?.oneofIndex == 0)
        #expect(fields["coupon"]?.oneofIndex == 1)
        #expect(fields["coupon"]?.proto3Optional == true)
        #expect(fields["unpacked_numbers"]?.packed == false)
        #expect(fields["packed_numbers"]?.packed == nil)
        #expect(fields["zigzag32"]?.kind == .sint32)
        #expect(fields["sf64"]?.kind == .sfixed64)
        #expect(fields["ship_to"]?.typeName == ".acme.common.Address")
        #expect(fields["placed_at"]?.typeName == ".google.protobuf.Timestamp")
    }

    @Test func readsProto2AndGroups() throws {
        let common = try fixture("acme/common.proto")
        #expect(common.syntax == .proto2)
        #expect(common.messages.map(\.name) == ["Money", "Address"])
        #expect(common.messages[1].nestedMessages.map(\.name) == ["Geo"])
        #expect(common.messages[0].fields[0] == ProtoField(name: "currency", number: 1, kind: .enum, typeName: ".acme.common.Currency"))

        let legacy = try fixture("legacy-value")
        let extra = try #require(legacy.messages[0].fields.first { $0.name == "extra" })
        #expect(extra.kind == .group)
        #expect(extra.typeName == ".acme.legacy.LegacyOrder.Extra")
    }

    @Test func brokenDescriptorsAreSchemaErrors() throws {
        let bytes = try descriptorBytes("orders-value")
        for cut in [1, 2, 20, bytes.count / 2, bytes.count - 1] {
            #expect(throws: SchemaError.self, "cut at \(cut)") { try ProtoDescriptorReader.read(Array(bytes.prefix(cut))) }
        }
        var badSyntax = ProtoTestEncoder()
        badSyntax.string(1, "x.proto")
        badSyntax.string(12, "proto4")
        #expect(throws: SchemaError.self) { try ProtoDescriptorReader.read(badSyntax.bytes) }

        // A message field without its type name; a field numbered 0; a name as a varint.
        let noTypeName = ProtoTestEncoder.message("M", [ProtoTestEncoder.field("f", 1, type: 11)])
        let zero = ProtoTestEncoder.message("M", [ProtoTestEncoder.field("f", 0, type: 9)])
        for message in [noTypeName, zero, [0x08, 0x01]] {
            var file = ProtoTestEncoder()
            file.bytes(4, message)
            #expect(throws: SchemaError.self) { try ProtoDescriptorReader.read(file.bytes) }
        }
    }

    @Test func errorsNameTheReason() {
        var file = ProtoTestEncoder()
        file.bytes(4, ProtoTestEncoder.message("Order", [ProtoTestEncoder.field("f", 1, type: 99)]))
        do {
            _ = try ProtoDescriptorReader.read(file.bytes)
            Issue.record("a field of type 99 was read")
        } catch {
            #expect(error.description.contains("FileDescriptorProto"))
            #expect(error.description.contains("type 99"))
            #expect(error.description.contains("Order"))
        }
    }

    /// A descriptor's base64 as registries hand it over: RFC 4648's vectors, padded or not, in
    /// lines; the standard alphabet only; `=` only where it completes the last group of four.
    @Test func base64() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64.encodeToString(bytes: Array(plain.utf8)) == encoded)
            #expect(ProtoDescriptorBase64.decode(encoded) == Array(plain.utf8))
        }
        #expect(ProtoDescriptorBase64.decode("Zm9v\nYmFy") == Array("foobar".utf8))
        #expect(ProtoDescriptorBase64.decode(" Zm9v\r\n\tYmE= \n") == Array("fooba".utf8))
        #expect(ProtoDescriptorBase64.decode("Zm9vYg") == Array("foob".utf8))
        #expect(ProtoDescriptorBase64.decode("Zm9vYmE") == Array("fooba".utf8))
        #expect(ProtoDescriptorBase64.decode("+/+/") == [0xFB, 0xFF, 0xBF])
        // The last character's bits past the last byte are not checked, as before: `9` in place of `8`.
        #expect(ProtoDescriptorBase64.decode("Zm9=") == Array("fo".utf8))
        #expect(ProtoDescriptorBase64.decode("Zm9") == Array("fo".utf8))
        for broken in ["Z", "Zm9=v", "Zm9v*", "Zg===", "Zg=", "Zg=A", "Zg=\nA", "Zm8=Zm8=", "====", "Zm9vY===", "-_-_", "Zm9vé"] {
            #expect(ProtoDescriptorBase64.decode(broken) == nil, "\(broken)")
        }
        #expect(ProtoDescriptorBase64.looksLikeBase64("Zm9v+/=="))
        #expect(ProtoDescriptorBase64.looksLikeBase64("Zm9v\n+/=="))
        #expect(!ProtoDescriptorBase64.looksLikeBase64("syntax = \"proto3\";"))
        #expect(!ProtoDescriptorBase64.looksLikeBase64("Zm9v-_"))
        #expect(!ProtoDescriptorBase64.looksLikeBase64("  "))
    }

    /// A registered descriptor in MIME's 76-character lines, its padding dropped: ExtrasBase64
    /// alone refuses it, the schema loader reads the same descriptor and decodes the same record.
    @Test func descriptorInLinesUnpadded() throws {
        var encoded = Array(try #require(ProtoWireFixtures.schemas["orders-value"]).utf8)
        while encoded.last == UInt8(ascii: "=") { encoded.removeLast() }
        let lines = stride(from: 0, to: encoded.count, by: 76).map { String(decoding: encoded[$0..<min($0 + 76, encoded.count)], as: UTF8.self) }
        let text = " " + lines.joined(separator: "\r\n") + "\n"
        #expect(lines.count > 2 && encoded.count % 4 != 0, "several lines, and padding to drop")
        #expect(throws: Base64.DecodingError.self) { try Base64.decode(string: text) }
        #expect(throws: Base64.DecodingError.self) { try Base64.decode(bytes: encoded) }
        #expect(ProtoDescriptorBase64.decode(text) == (try descriptorBytes("orders-value")))
        let common = try #require(ProtoWireFixtures.schemas["acme/common.proto"])
        let schema = try ProtobufSchema(schema: text, references: [("acme/common.proto", common)])
        let (order, name) = try decodeFramed(ProtoWireFixtures.fullOrder, schema)
        #expect(name == "acme.orders.OrderPlaced")
        #expect(order == (try decodeFramed(ProtoWireFixtures.fullOrder, try ordersSchema())).value)
    }
}
