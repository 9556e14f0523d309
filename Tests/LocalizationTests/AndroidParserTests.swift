import Localization
import Testing

@Suite("Android strings.xml")
struct AndroidParserTests {
    @Test("escapes, quotes, whitespace, entities, CDATA and inline markup are decoded as aapt2 does")
    func decoding() throws {
        let xml = #"""
            <resources xmlns:xliff="urn:oasis:names:tc:xliff:document:1.2">
                <string name="apostrophe">It\'s \"quoted\" \@home \?maybe</string>
                <string name="newline">Line 1\nLine 2\tTabbed</string>
                <string name="unicode">\u00e9t\u00E9 \\ backslash</string>
                <string name="spaces">   many    spaces
                    and a newline   </string>
                <string name="quoted">"  kept   as is  " then  collapsed</string>
                <string name="quote_entity">&quot;gone&quot; \&quot;kept\&quot;</string>
                <string name="cdata"><![CDATA[<b>%1$s</b> & co]]></string>
                <string name="markup">Hi <b>%1$s</b>, <xliff:g id="count" example="3">%2$s</xliff:g> new</string>
                <string name="rtl">مرحبًا &#x2068;%1$s&#x2069;!</string>
                <string name="raw" formatted="false">100% sure</string>
                <string name="fixed" translatable="false">Brand</string>
                <item type="string" name="as_item">From an item</item>
                <string name="alias">@string/apostrophe</string>
                <color name="skipped">#fff</color>
            </resources>
            """#
        let parsed = try AndroidStringsParser.parse(bytes(xml), file: "values/strings.xml")
        let v = Dictionary(uniqueKeysWithValues: parsed.entries.map { ($0.key, $0) })
        #expect(v["apostrophe"]?.value == #"It's "quoted" @home ?maybe"#)
        #expect(v["newline"]?.value == "Line 1\nLine 2\tTabbed")
        #expect(v["unicode"]?.value == #"été \ backslash"#)
        #expect(v["spaces"]?.value == "many spaces and a newline")
        #expect(v["quoted"]?.value == "  kept   as is   then collapsed")
        #expect(v["quote_entity"]?.value == #"gone "kept""#)
        #expect(v["cdata"]?.value == "<b>%1$s</b> & co")
        #expect(v["markup"]?.value == "Hi %1$s, %2$s new")
        #expect(v["rtl"]?.value == "مرحبًا \u{2068}%1$s\u{2069}!")
        #expect(v["raw"]?.formatted == false)
        #expect(v["raw"]?.value == "100% sure")
        #expect(v["fixed"]?.translatable == false)
        #expect(v["as_item"]?.value == "From an item")
        #expect(v["alias"]?.reference == "apostrophe")
        #expect(v["skipped"] == nil)
        #expect(v["markup"]?.location == SourceLocation(file: "values/strings.xml", line: 10))
        #expect(parsed.problems.isEmpty)
    }

    @Test(
        "what aapt2 refuses in a value is an error at its line, an unmatched quote a warning; the text is read as aapt2 reads it",
        arguments: [
            ("It's here", "It's here", ["error 3: s: an apostrophe outside double quotes"]),
            (#""It's here" now"#, "It's here now", []),
            (#"It\'s here"#, "It's here", []),
            ("first line\n        it's the second", "first line it's the second", ["error 4: s: an apostrophe outside double quotes"]),
            (#"arrow \u21g2"#, "arrow g2", [#"error 3: s: \u21g is not a \uXXXX escape"#]),
            (#"short \u41"#, "short A", []),  // fewer than four digits at the end: accepted
            (#"a \r b \q"#, "a r b q", []),  // an unknown escape keeps the character
            (#"She said "hi"#, "She said hi", ["warning 3: s: a double quote with no closing one"]),
        ])
    func aapt2Refusals(value: String, text: String, problems: [String]) throws {
        let xml = "<resources>\n\n    <string name=\"s\">\(value)</string>\n</resources>"
        let parsed = try AndroidStringsParser.parse(bytes(xml), file: "values/strings.xml")
        #expect(parsed.entries.first?.value == text)
        #expect(parsed.problems.count == problems.count)
        for (p, expected) in zip(parsed.problems, problems) {
            #expect(p.kind == .androidBuild)
            #expect("\(p.severity.rawValue) \(p.location.line): \(p.message)".hasPrefix(expected), "\(p)")
        }
    }

    @Test("translatable and formatted take aapt2's booleans; anything else is refused; a *donottranslate* file is untranslatable")
    func booleanAttributes() throws {
        let xml = #"""
            <resources>
                <string name="a" translatable="False">A</string>
                <string name="b" translatable="no">B</string>
                <string name="c" formatted=" TRUE ">C</string>
                <string name="d" formatted="0">D</string>
            </resources>
            """#
        let parsed = try AndroidStringsParser.parse(bytes(xml), file: "values/strings.xml")
        let v = Dictionary(uniqueKeysWithValues: parsed.entries.map { ($0.key, $0) })
        #expect(v["a"]?.translatable == false)
        #expect(v["c"]?.formatted == true)
        #expect(parsed.problems.map(\.location.line) == [3, 5])
        #expect(
            parsed.problems.first?.message
                == #"b: translatable="no" is not a boolean: aapt2 stops with "invalid value for 'translatable'. Must be a boolean" (write true or false)"#
        )
        let untranslatable = try AndroidStringsParser.parse(
            bytes(#"<resources><string name="e">E</string><string name="f" translatable="true">F</string></resources>"#),
            file: "res/values/donottranslate.xml")
        #expect(untranslatable.entries.map(\.translatable) == [false, true])
    }

    @Test("plurals and string arrays are recognised with their kind")
    func pluralsAndArrays() throws {
        let xml = """
            <resources>
              <plurals name="songs">
                <item quantity="one">%d song</item>
                <item quantity="other">%d songs</item>
              </plurals>
              <string-array name="planets"><item>Mercury</item><item>Venus</item></string-array>
            </resources>
            """
        let parsed = try AndroidStringsParser.parse(bytes(xml), file: "f.xml")
        #expect(parsed.entries.map(\.kind) == [.plurals, .stringArray])
        #expect(parsed.entries[0].value == "%d songs")
        #expect(parsed.entries[0].location.line == 2)
        #expect(parsed.entries[1].location.line == 6)
    }

    @Test("duplicates and nameless strings are problems with file:line")
    func problems() throws {
        let xml = "<resources>\n<string name=\"a\">x</string>\n<string>y</string>\n<string name=\"a\">z</string>\n</resources>"
        let parsed = try AndroidStringsParser.parse(bytes(xml), file: "values/strings.xml")
        #expect(
            parsed.problems.map(\.description) == [
                "values/strings.xml:3: error: <string> without a name",
                "values/strings.xml:4: error: duplicate resource a (first at line 2); aapt2 rejects this file",
            ])
    }

    @Test("malformed XML and a wrong root fail with file:line")
    func parseErrors() {
        #expect(
            throws: ResourceProblem(
                .error, SourceLocation(file: "s.xml", line: 3), "invalid XML: </resources> does not match <string> opened at line 2")
        ) {
            try AndroidStringsParser.parse(bytes("<resources>\n<string name=\"a\">x\n</resources>"), file: "s.xml")
        }
        #expect(throws: ResourceProblem(.error, SourceLocation(file: "s.xml", line: 1), "the root element is <plist>, expected <resources>")) {
            try AndroidStringsParser.parse(bytes("<plist/>"), file: "s.xml")
        }
    }

    @Test("a UTF-16 strings.xml is read too")
    func utf16File() throws {
        let parsed = try AndroidStringsParser.parse(
            utf16(#"<resources><string name="a">Größe</string></resources>"#, littleEndian: true), file: "f.xml")
        #expect(parsed.entries.first?.value == "Größe")
    }

    @Test(
        "directory qualifiers give the locale",
        arguments: [
            ("values", nil, []),
            ("values-fr", "fr", []),
            ("values-pt-rBR", "pt-BR", []),
            ("values-b+sr+Latn", "sr-Latn", []),
            ("values-b+es+419", "es-419", []),
            ("values-fr-night", "fr", ["night"]),
            ("values-night", nil, ["night"]),
            ("values-v21", nil, ["v21"]),
            ("values-mcc310-en-rUS", "en-US", ["mcc310"]),
        ] as [(String, String?, [String])])
    func qualifiers(directory: String, locale: String?, others: [String]) {
        #expect(ResourceQualifier.parse(directoryName: directory) == ResourceQualifier(locale: locale, others: others))
    }

    @Test("not a values directory")
    func notValues() {
        #expect(ResourceQualifier.parse(directoryName: "drawable-hdpi") == nil)
    }
}
