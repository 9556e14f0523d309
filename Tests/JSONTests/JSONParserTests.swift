import Testing

@testable import JSON

@Suite("JSON parser")
struct JSONParserTests {
    @Test("values, nesting, escapes and surrogate pairs")
    func values() throws {
        let v = try JSONParser.parse(#" {"a":[1,-2.5e1,true,false,null,"x\n\u00e9\ud83d\ude00"],"b":{}} "#)
        #expect(v["a"] == .array([.int(1), .double(-25), .bool(true), .bool(false), .null, .string("x\né😀")]))
        #expect(v["b"] == .object([]))
    }

    @Test(
        "invalid documents are refused with a position",
        arguments: [
            "", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "\"a", "tru", "{} x", "\"\u{01}\"", "\"\\ud800\"",
        ])
    func invalid(text: String) {
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(text) }
    }

    @Test(
        "a sparse parse refuses what a full parse refuses, at the same byte",
        arguments: [
            #"{"skip":[1,]}"#, #"{"skip":{"a" 1}}"#, #"{"skip":01}"#, #"{"skip":"\x"}"#, #"{"skip":"\ud800"}"#,
            #"{"skip":tru}"#, #"{"skip":1e999}"#, "{\"skip\":\"\u{01}\"}", #"{"sk\u0069p":[}"#, #"{"skip":{"k":"v"}"#,
            #"{"skip":[[[]]}"#, #"{"keep":1,"skip":"x"} y"#,
        ])
    func sparseInvalid(text: String) {
        var paths = JSONPathSet()
        paths.insert(["keep"])
        let bytes = Array(text.utf8)
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(bytes, keeping: paths) }
        let full = Result { () throws(JSONParser.Error) in try JSONParser.parse(bytes) }
        let sparse = Result { () throws(JSONParser.Error) in try JSONParser.parse(bytes, keeping: paths) }
        if case .failure(let a) = full, case .failure(let b) = sparse {
            #expect(a.offset == b.offset && a.reason == b.reason)
        }
    }

    @Test("a sparse parse keeps exactly the members on the paths")
    func sparseKeeps() throws {
        var paths = JSONPathSet()
        paths.insert(["a", "b"])
        paths.insert(["list", "0"])
        paths.insert(["w\u{e9}"])
        let doc = try JSONParser.parse(
            Array(#"{"x":{"y":[1,2]},"a":{"b":"B","c":"C"},"list":[{"p":1},2],"w\u00e9":true,"zé":false}"#.utf8), keeping: paths)
        #expect(JSONWriter.string(doc) == #"{"a":{"b":"B"},"list":[{"p":1},2],"wé":true}"#)
    }

    @Test(
        "integers: the full Int64 range, then their exact text; numbers with a fraction or exponent are doubles",
        arguments: [
            ("9223372036854775807", JSONValue.int(.max)), ("-9223372036854775808", .int(.min)), ("-0", .int(0)),
            ("9223372036854775808", .bigInteger("9223372036854775808")), ("-12345678901234567890123", .bigInteger("-12345678901234567890123")),
            ("12", .int(12)), ("1e19", .double(1e19)), ("12345678901234567890.0", .double(12_345_678_901_234_567_890)),
        ])
    func integers(text: String, value: JSONValue) throws {
        #expect(try JSONParser.parse(text) == value)
        if case .bigInteger = value { #expect(JSONWriter.string(try JSONParser.parse(text)) == text, "written back digit for digit") }
        if case .int(let i) = value {
            var out: [UInt8] = []
            JSONWriter.writeInteger(i, into: &out)
            #expect(String(decoding: out, as: UTF8.self) == String(i))
        }
    }

    @Test("the one string escaper: quotes, backslashes and control characters escaped (\\n \\r \\t short), the rest kept as UTF-8")
    func stringEscapes() throws {
        let s = "a\"b\\c/\n\r\t\u{01}\u{1F}\u{7F}é😀"
        let written = #""a\"b\\c/\n\r\t\u0001\u001f"# + "\u{7F}é😀\""
        #expect(JSONWriter.quoted(s) == written)
        #expect(JSONWriter.string(.string(s)) == written, "values and hand-written JSON are escaped alike")
        #expect(JSONWriter.string(.object([(s, .null)])) == "{" + written + ":null}", "and keys")
        #expect(try JSONParser.parse(written) == .string(s))
    }

    @Test("JSON Pointer: escapes and array indexes (RFC 6901)")
    func pointer() throws {
        let doc = try JSONParser.parse(#"{"a/b":{"m~n":[10,20]},"":1}"#)
        #expect(JSONPointer("/a~1b/m~0n/1")?.resolve(in: doc) == .int(20))
        #expect(JSONPointer("/a~1b/m~0n/01")?.resolve(in: doc) == nil)
        #expect(JSONPointer("/")?.resolve(in: doc) == .int(1))
        #expect(JSONPointer("a") == nil)
    }
}
