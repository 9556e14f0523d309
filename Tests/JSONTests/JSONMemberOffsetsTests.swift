import JSON
import Testing

/// `JSONParser.parseWithMemberOffsets`, which the String Catalog parser reads positions from.
@Suite("JSON member offsets")
struct JSONMemberOffsetsTests {
    /// The members' pointers and offsets, in order.
    func members(_ text: String) throws -> [(String, Int)] {
        let (value, members) = try JSONParser.parseWithMemberOffsets(Array(text.utf8))
        #expect(value == (try JSONParser.parse(text)))
        return members.map { ($0.pointer.description, $0.offset) }
    }

    func offsets(_ text: String) throws -> [String: Int] {
        Dictionary(uniqueKeysWithValues: try members(text))
    }

    @Test("each member's name by its pointer: nested, in arrays, at the opening quote")
    func nested() throws {
        let text = #"{"a": {"b": 1, "c": [{"d": true}, 2, {"e": null}]}, "f": "x"}"#
        let found = try offsets(text)
        let utf8 = Array(text.utf8)
        #expect(try members(text).map(\.0) == ["/a", "/a/b", "/a/c", "/a/c/0/d", "/a/c/2/e", "/f"])
        for (pointer, offset) in found {
            let name = "\"" + (JSONPointer(pointer)?.tokens.last ?? "") + "\""
            #expect(Array(utf8[offset..<(offset + name.utf8.count)]) == Array(name.utf8), "\(pointer)")
        }
        #expect(found["/a"] == 1)
        #expect(found["/f"] == 52)
    }

    @Test("offsets count bytes: UTF-8 before a name, escapes in it")
    func bytes() throws {
        let found = try offsets("{\"é😀\": 1,\n \"a\\/b\": {\"\\u007e\": 2}}")
        #expect(found["/é😀"] == 1)
        // Names are unescaped, then escaped as RFC 6901 says: / as ~1, ~ as ~0.
        #expect(found["/a~1b"] == 15)
        #expect(found["/a~1b/~0"] == 24)
    }

    @Test("a repeated name each time, in document order")
    func repeated() throws {
        let found = try members(#"{"k": {"a": 1}, "k": {"a": 2}}"#)
        #expect(found.map(\.0) == ["/k", "/k/a", "/k", "/k/a"])
        #expect(found.map(\.1) == [1, 7, 16, 22])
    }

    @Test("no members, no offsets; errors as parse throws them")
    func emptyAndErrors() throws {
        #expect(try offsets("[1, [], {}]").isEmpty)
        #expect(try offsets("\"text\"").isEmpty)
        #expect {
            _ = try JSONParser.parseWithMemberOffsets(Array("{\"a\": [1,]}".utf8))
        } throws: { error in
            (error as? JSONParser.Error)?.offset == 9
        }
    }

    @Test("a pointer made of tokens is the pointer its text parses to")
    func pointerFromTokens() {
        let tokens = ["a/b", "~", "", "0", "é"]
        let pointer = JSONPointer(tokens: tokens)
        #expect(pointer.description == "/a~1b/~0//0/é")
        #expect(JSONPointer(pointer.description) == pointer)
        #expect(JSONPointer(tokens: []).description == "")
        #expect(JSONPointer(tokens: ["~1"]).description == "/~01")
    }
}
