import Foundation
import Localization
import Testing

@Suite("iOS .strings, .stringsdict and .xcstrings")
struct AppleParserTests {
    static let strings = #"""
        /* Block comment
           over two lines */
        "WELCOME_TITLE" = "Welcome, %1$@!";
        // line comment
        "ESCAPES" = "Tab\there \"quoted\" back\\slash\nnew line";
        "UNICODE" = "caf\U00E9 \UD83D\UDE00";
        "RTL" = "مرحبًا يا %1$@!";
        unquoted_key = unquoted.value;
        "SHORT";
        "OCTAL" = "\101";
        """#

    @Test("UTF-8: comments, escapes, unquoted tokens, the short form, lines")
    func utf8() throws {
        let parsed = try StringsFileParser.parse(bytes(Self.strings), file: "en.lproj/Localizable.strings")
        let v = Dictionary(uniqueKeysWithValues: parsed.entries.map { ($0.key, $0) })
        #expect(v["WELCOME_TITLE"]?.value == "Welcome, %1$@!")
        #expect(v["WELCOME_TITLE"]?.location.line == 3)
        #expect(v["ESCAPES"]?.value == "Tab\there \"quoted\" back\\slash\nnew line")
        #expect(v["ESCAPES"]?.location.line == 5)
        #expect(v["UNICODE"]?.value == "café 😀")
        #expect(v["RTL"]?.value == "مرحبًا يا %1$@!")
        #expect(v["unquoted_key"]?.value == "unquoted.value")
        #expect(v["SHORT"]?.value == "SHORT")
        #expect(v["OCTAL"]?.value == "A")
        #expect(v["OCTAL"]?.location.line == 10)
    }

    @Test("UTF-16 with a BOM, little and big endian", arguments: [true, false])
    func utf16File(littleEndian: Bool) throws {
        let parsed = try StringsFileParser.parse(utf16(Self.strings, littleEndian: littleEndian), file: "fr.lproj/Localizable.strings")
        let v = Dictionary(uniqueKeysWithValues: parsed.entries.map { ($0.key, $0.value) })
        #expect(v["RTL"] == "مرحبًا يا %1$@!")
        #expect(v["UNICODE"] == "café 😀")
        #expect(parsed.entries.first { $0.key == "OCTAL" }?.location.line == 10)
        #expect(TextDecoding.decode(utf16("x", littleEndian: littleEndian))?.encoding == (littleEndian ? .utf16LE : .utf16BE))
    }

    @Test("UTF-16 without a BOM is recognised from its NUL bytes")
    func utf16WithoutBOM() throws {
        let parsed = try StringsFileParser.parse(Array(utf16(#""A" = "é";"#, littleEndian: true).dropFirst(2)), file: "x.strings")
        #expect(parsed.entries.first?.value == "é")
    }

    @Test("the fixture files in UTF-16LE and UTF-16BE")
    func utf16Fixtures() throws {
        for (path, expected) in [
            ("clean/ios/fr.lproj/Localizable.strings", TextEncoding.utf16LE),
            ("clean/ios/sr-Latn.lproj/Localizable.strings", .utf16BE),
        ] {
            let data = try #require(FileManager.default.contents(atPath: "\(fixtures)/\(path)"))
            #expect(TextDecoding.decode(Array(data))?.encoding == expected)
            let parsed = try StringsFileParser.parse(Array(data), file: path)
            #expect(parsed.entries.count == 3)
        }
    }

    @Test("duplicate keys: the last wins, with a warning")
    func duplicates() throws {
        let parsed = try StringsFileParser.parse(bytes("\"A\" = \"1\";\n\"A\" = \"2\";"), file: "x.strings")
        #expect(parsed.entries.map(\.value) == ["2"])
        #expect(parsed.problems.map(\.description) == [#"x.strings:2: warning: duplicate key "A" (first at line 1); the last one wins"#])
    }

    @Test(
        "syntax errors carry file:line",
        arguments: [
            // A missing ; is reported on the pair's line, not on the next token's (as CoreFoundation does).
            ("\"A\" = \"1\";\n\"B\" = \"2\"\n\"C\" = \"3\";", 2, "expected ; after the value of \"B\""),
            ("\"A\" = \"1\";\n\"B\" = \"2\" // two\n\n/* next */\n\"C\" = \"3\";", 2, "expected ; after the value of \"B\""),
            ("\"A\" = \"1\";\n\"B\"\n\"C\" = \"3\";", 2, "expected ; after the value of \"B\""),
            ("\"A\" = \"1\";\n\n\"B\" = \"never closed;\n", 3, "unterminated string"),
            ("/* open\n\n", 1, "unterminated /* comment"),
            ("\"A\" = ;", 1, "expected a value in double quotes"),
        ])
    func syntaxErrors(text: String, line: Int, message: String) {
        #expect {
            _ = try StringsFileParser.parse(bytes(text), file: "x.strings")
        } throws: { error in
            guard let p = error as? ResourceProblem else { return false }
            return p.location == SourceLocation(file: "x.strings", line: line) && p.message.contains(message)
        }
    }

    @Test(".stringsdict: plural rules are plurals; device and width rules are strings")
    func stringsdict() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>ITEMS</key>
                <dict>
                    <key>NSStringLocalizedFormatKey</key>
                    <string>%#@items@</string>
                    <key>items</key>
                    <dict>
                        <key>NSStringFormatSpecTypeKey</key>
                        <string>NSStringPluralRuleType</string>
                        <key>NSStringFormatValueTypeKey</key>
                        <string>d</string>
                        <key>one</key>
                        <string>%d item</string>
                        <key>other</key>
                        <string>%d items</string>
                    </dict>
                </dict>
                <key>TAP</key>
                <dict>
                    <key>NSStringDeviceSpecificRuleType</key>
                    <dict>
                        <key>iphone</key>
                        <string>Tap on your iPhone, %@</string>
                        <key>other</key>
                        <string>Click, %@</string>
                    </dict>
                </dict>
                <key>TITLE</key>
                <dict>
                    <key>NSStringVariableWidthRuleType</key>
                    <dict>
                        <key>20</key>
                        <string>Hi</string>
                        <key>100</key>
                        <string>Hello there</string>
                    </dict>
                </dict>
            </dict>
            </plist>
            """
        let parsed = try StringsDictParser.parse(bytes(plist), file: "en.lproj/Localizable.stringsdict")
        let v = Dictionary(uniqueKeysWithValues: parsed.entries.map { ($0.key, $0) })
        #expect(v["ITEMS"]?.kind == .stringsdictPlural)
        #expect(v["ITEMS"]?.value == "%d items")
        #expect(v["ITEMS"]?.location.line == 5)
        #expect(v["TAP"]?.kind == .string)
        #expect(v["TAP"]?.value == "Tap on your iPhone, %@")
        #expect(v["TITLE"]?.value == "Hello there")
    }

    @Test(".stringsdict errors carry file:line")
    func stringsdictErrors() throws {
        let data = try #require(FileManager.default.contents(atPath: "\(fixtures)/broken/ios/fr.lproj/Localizable.stringsdict"))
        #expect(
            throws: ResourceProblem(
                .error, SourceLocation(file: "f", line: 6), "invalid property list: <key>NSStringLocalizedFormatKey</key> has no value")
        ) {
            try StringsDictParser.parse(Array(data), file: "f")
        }
    }

    @Test(".xcstrings: states, plural and device variations, shouldTranslate, implicit source, lines")
    func xcstrings() throws {
        let path = "\(fixtures)/catalog/Localizable.xcstrings"
        let data = try #require(FileManager.default.contents(atPath: path))
        let catalog = try XCStringsParser.parse(Array(data), file: "L.xcstrings")
        #expect(catalog.sourceLanguage == "en")
        let en = Dictionary(uniqueKeysWithValues: (catalog.entries["en"] ?? []).map { ($0.key, $0) })
        let fr = Dictionary(uniqueKeysWithValues: (catalog.entries["fr"] ?? []).map { ($0.key, $0) })
        #expect(en["GREETING_TITLE"]?.value == "Hi, %1$@!")
        #expect(en["GREETING_TITLE"]?.location.line == 45)
        #expect(fr["GREETING_TITLE"]?.value == "Salut, %1$@ !")
        #expect(fr["GREETING_TITLE"]?.location.line == 51)
        #expect(en["DEVICE_BODY"]?.value == "Tap to open on your iPhone, %@")
        #expect(fr["DEVICE_BODY"]?.state == "needs_review")
        #expect(en["ITEMS_BODY"]?.kind == .xcstringsPlural)
        #expect(en["ITEMS_BODY"]?.value == "%lld items")
        #expect(fr["ITEMS_BODY"]?.kind == .xcstringsPlural)
        #expect(en["BRAND_TITLE"]?.translatable == false)
        #expect(en["Hello %@"]?.value == "Hello %@")  // no localizations: the key is the source text
        #expect(fr["BRAND_TITLE"] == nil)
    }

    @Test(".xcstrings in UTF-16 and broken JSON")
    func xcstringsEncodingAndErrors() throws {
        let json =
            #"{"sourceLanguage":"de","strings":{"A":{"localizations":{"de":{"stringUnit":{"state":"translated","value":"Grüße"}}}}},"version":"1.0"}"#
        for littleEndian in [true, false] {
            let catalog = try XCStringsParser.parse(utf16(json, littleEndian: littleEndian), file: "x.xcstrings")
            #expect(catalog.sourceLanguage == "de")
            #expect(catalog.entries["de"]?.first?.value == "Grüße")
        }
        #expect(throws: ResourceProblem.self) {
            try XCStringsParser.parse(bytes("{\"strings\": {\n\"A\": }"), file: "x.xcstrings")
        }
        #expect(throws: ResourceProblem(.error, SourceLocation(file: "x.xcstrings", line: 1), "not a String Catalog: no \"strings\" object")) {
            try XCStringsParser.parse(bytes("[]"), file: "x.xcstrings")
        }
    }
}
