import Foundation
import Localization
import Testing

/// Where a String Catalog's entries and errors are reported: the line of the member's name.
@Suite(".xcstrings lines")
struct XCStringsLineTests {
    /// file:line of every entry, by language and key.
    func lines(_ bytes: [UInt8]) throws -> [String: Int] {
        let catalog = try XCStringsParser.parse(bytes, file: "x.xcstrings")
        var out: [String: Int] = [:]
        for (language, entries) in catalog.entries {
            for entry in entries { out["\(language) \(entry.key)"] = entry.location.line }
        }
        return out
    }

    static let fixtureLines = [
        "en BRAND_TITLE": 7, "en DEVICE_BODY": 17, "fr DEVICE_BODY": 35, "en GREETING_TITLE": 45, "fr GREETING_TITLE": 51,
        "en Hello %@": 59, "en ITEMS_BODY": 64, "fr ITEMS_BODY": 82,
    ]

    @Test("each localization at its language's line; a key with none for the source language at the key's")
    func fixture() throws {
        let data = try #require(FileManager.default.contents(atPath: "\(fixtures)/catalog/Localizable.xcstrings"))
        #expect(try lines(Array(data)) == Self.fixtureLines)
    }

    @Test("CRLF line ends count as one line each")
    func crlf() throws {
        let data = try #require(FileManager.default.contents(atPath: "\(fixtures)/catalog/Localizable.xcstrings"))
        let text = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try lines(bytes(text)) == Self.fixtureLines)
        #expect(try lines(utf16(text, littleEndian: false)) == Self.fixtureLines)
    }

    @Test("a member's own line, where its name also names members before it or is written with escapes")
    func exactMembers() throws {
        let text = #"""
            {
              "sourceLanguage" : "en",
              "strings" : {
                "A" : {
                  "localizations" : {
                    "en" : { "stringUnit" : { "state" : "translated", "value" : "a" } }
                  }
                },
                "caf\u00e9 \/ \"x\"" : {
                  "localizations" : {
                    "fr" : { "stringUnit" : { "state" : "translated", "value" : "c" } }
                  }
                },
                "en" : {
                  "localizations" : {
                    "en" : { "stringUnit" : { "state" : "translated", "value" : "b" } }
                  }
                }
              }
            }
            """#
        #expect(
            try lines(bytes(text)) == [
                "en A": 6, "en café / \"x\"": 9, "fr café / \"x\"": 11, "en en": 16,
            ])
    }

    @Test("invalid JSON at the line of the error", arguments: [("{\"strings\": {\n\"A\": }", 2), ("{\n\n  \"strings\": {,}}", 3), ("\n\n", 3)])
    func invalid(text: String, line: Int) {
        #expect(throws: ResourceProblem(.error, SourceLocation(file: "x.xcstrings", line: line), "invalid JSON in a String Catalog")) {
            try XCStringsParser.parse(bytes(text), file: "x.xcstrings")
        }
    }

    @Test("a repeated name: the last counts; device variations without an iPhone or other text: the first")
    func repeatedAndDevices() throws {
        let text = #"""
            {"strings": {
              "A": {"localizations": {"en": {"stringUnit": {"value": "first"}}}},
              "A": {"shouldTranslate": 0, "localizations": {"en": {"stringUnit": {"value": "last"}}}},
              "B": {"localizations": {"en": {"variations": {"device": {
                "mac": {"stringUnit": {"value": "mac"}}, "ipad": {"stringUnit": {"value": "ipad"}}, "watch": {"stringUnit": {"value": "watch"}}
              }}}}}
            }}
            """#
        let catalog = try XCStringsParser.parse(bytes(text), file: "x.xcstrings")
        let en = Dictionary(uniqueKeysWithValues: (catalog.entries["en"] ?? []).map { ($0.key, $0) })
        #expect(en["A"]?.value == "last")
        #expect(en["A"]?.location.line == 3)
        #expect(en["A"]?.translatable == false)
        #expect(en["B"]?.value == "mac")
    }
}
