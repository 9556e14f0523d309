import Testing

@testable import Localization

@Suite("The format-specifier scanner Java and Apple share")
struct FormatScannerTests {
    /// Every piece of `format`, or the scan error.
    func pieces(_ format: String, _ grammar: FormatGrammar) -> Result<[FormatScanner.Piece], FormatScanError> {
        var scanner = FormatScanner(format, grammar: grammar)
        var pieces: [FormatScanner.Piece] = []
        do {
            while let piece = try scanner.next() { pieces.append(piece) }
        } catch {
            return .failure(error)
        }
        return .success(pieces)
    }

    func specifier(_ format: String, _ grammar: FormatGrammar) throws -> ScannedSpecifier {
        let all = try pieces(format, grammar).get()
        guard all.count == 1, case .specifier(let s) = all[0] else {
            Issue.record("expected one specifier in \(format), got \(all)")
            throw FormatScanError(text: format, found: nil)
        }
        return s
    }

    @Test("literal text comes in runs between specifiers, never empty")
    func literals() throws {
        #expect(
            try pieces("a%%b%1$sc", JavaFormat.grammar).get() == [
                .literal("a"),
                .specifier(ScannedSpecifier(text: "%%", index: nil, conversion: "%")),
                .literal("b"),
                .specifier(ScannedSpecifier(text: "%1$s", index: 1, conversion: "s")),
                .literal("c"),
            ])
        #expect(try pieces("%n%@", AppleFormat.grammar).get().count == 2)
        #expect(try pieces("", JavaFormat.grammar).get().isEmpty)
        #expect(try pieces("no specifier", AppleFormat.grammar).get() == [.literal("no specifier")])
    }

    @Test("index, flags, width and precision, in that order, as each grammar reads them")
    func parts() throws {
        let java = try specifier("%2$-#10.3s", JavaFormat.grammar)
        #expect(java.index == 2)
        #expect(java.flags == "-#")
        #expect(java.width == 10)
        #expect(java.precision == 3)
        #expect(java.text == "%2$-#10.3s")
        // 0 is a flag before the width; digits with no $ are the width.
        let zero = try specifier("%010d", JavaFormat.grammar)
        #expect(zero.index == nil)
        #expect(zero.flags == "0")
        #expect(zero.width == 10)
        #expect(try specifier("%0$s", JavaFormat.grammar).index == 0)
        // ' is a flag in C only; ( only in Java.
        #expect(try specifier("%'d", AppleFormat.grammar).flags == "'")
        #expect(try specifier("%(d", JavaFormat.grammar).flags == "(")
        #expect(throws: FormatScanError(text: "%'", found: "'")) { try pieces("%'d", JavaFormat.grammar).get() }
    }

    @Test("C: * for the width and the precision, and a bare . as precision 0")
    func stars() throws {
        let both = try specifier("%*.*@", AppleFormat.grammar)
        #expect(both.stars == 2)
        #expect(both.width == nil)
        #expect(both.precision == nil)
        #expect(try specifier("%.@", AppleFormat.grammar).precision == 0)
        #expect(try specifier("%-*@", AppleFormat.grammar).stars == 1)
        // Java has no *: it stands where the conversion belongs.
        #expect(throws: FormatScanError(text: "%*", found: "*")) { try pieces("%*s", JavaFormat.grammar).get() }
        // Java: a . needs digits.
        #expect(throws: FormatScanError(text: "%5.", found: ".")) { try pieces("%5.s", JavaFormat.grammar).get() }
    }

    @Test(
        "C length modifiers: the longest that matches",
        arguments: [
            ("%lld", "ll", "d"), ("%ld", "l", "d"), ("%hhx", "hh", "x"), ("%hu", "h", "u"), ("%qd", "q", "d"), ("%zu", "z", "u"),
            ("%jd", "j", "d"), ("%td", "t", "d"), ("%Lf", "L", "f"), ("%1$l@", "l", "@"),
        ])
    func lengths(format: String, length: String, conversion: Character) throws {
        let s = try specifier(format, AppleFormat.grammar)
        #expect(s.length == length)
        #expect(s.conversion == conversion)
    }

    @Test("Java's %t and %T take a date-time suffix; C's t is a length modifier")
    func dateTime() throws {
        let year = try specifier("%1$tY", JavaFormat.grammar)
        #expect(year.conversion == "t")
        #expect(year.dateTimeSuffix == "Y")
        #expect(year.text == "%1$tY")
        #expect(try specifier("%TH", JavaFormat.grammar).dateTimeSuffix == "H")
        #expect(throws: FormatScanError(text: "%tX", found: "tX")) { try pieces("%tX", JavaFormat.grammar).get() }
        #expect(throws: FormatScanError(text: "%t", found: "t")) { try pieces("%t", JavaFormat.grammar).get() }
        #expect(try specifier("%td", AppleFormat.grammar).dateTimeSuffix == nil)
    }

    @Test(
        "what stands where the conversion belongs, and the text read so far",
        arguments: [
            ("100%", FormatScanError(text: "%", found: nil)),
            ("%5", FormatScanError(text: "%5", found: nil)),
            ("ok %k then", FormatScanError(text: "%k", found: "k")),
            ("%q then", FormatScanError(text: "%q ", found: " ")),
            ("%1$ll", FormatScanError(text: "%1$ll", found: nil)),
        ])
    func scanErrors(format: String, error: FormatScanError) {
        #expect(pieces(format, AppleFormat.grammar) == .failure(error))
    }

    @Test("the grammar is data: another set of flags and conversions reads otherwise")
    func grammarAsData() throws {
        let bare = FormatGrammar(flags: [], starAmounts: false, barePeriod: .zeroPrecision, lengthModifiers: [], conversions: ["v"])
        #expect(try specifier("%3.v", bare) == ScannedSpecifier(text: "%3.v", index: nil, width: 3, precision: 0, conversion: "v"))
        #expect(throws: FormatScanError(text: "%-", found: "-")) { try pieces("%-3v", bare).get() }
        #expect(throws: FormatScanError(text: "%s", found: "s")) { try pieces("%s", bare).get() }
    }

    @Test("segments: literals and resolved specifiers in order, up to the first failure, the resolver's or the scanner's")
    func segments() throws {
        func segments(_ format: String) -> Result<[FormatSegment], FormatScanError> {
            FormatScanner.segments(
                of: format, grammar: JavaFormat.grammar, scanFailure: { $0 },
                resolve: { s in
                    s.conversion == "b"
                        ? .failure(FormatScanError(text: s.text, found: "refused"))
                        : .success(s.specifier(argument: s.index, isPositional: s.index != nil))
                })
        }
        let s2 = FormatSpecifier(text: "%2$s", argument: 2, isPositional: true, conversion: "s", flags: "", width: nil, precision: nil)
        #expect(try segments("x%2$sy").get() == [.literal("x"), .specifier(s2), .literal("y")])
        #expect(segments("%b %q") == .failure(FormatScanError(text: "%b", found: "refused")))
        #expect(segments("%q %b") == .failure(FormatScanError(text: "%q", found: "q")))
    }

    @Test("rendered: literal text as is, each specifier as rendered, up to the first failure")
    func rendered() throws {
        let segments = try JavaFormat.parse("a%sb%dc%%").get()
        let named: Result<String, FormatScanError> = segments.rendered { .success("<\($0.conversion)>") }
        #expect(named == .success("a<s>b<d>c<%>"))
        let failing: Result<String, FormatScanError> = segments.rendered {
            $0.conversion == "d" ? .failure(FormatScanError(text: $0.text, found: nil)) : .success("")
        }
        #expect(failing == .failure(FormatScanError(text: "%d", found: nil)))
    }
}
