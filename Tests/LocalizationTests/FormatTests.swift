import Localization
import Testing

@Suite("Java Formatter and Apple String(format:) semantics")
struct FormatTests {
    @Test(
        "Java: positional, ordinary, relative, %% and %n",
        arguments: [
            ("Welcome, %1$s!", ["Alice"], "Welcome, Alice!"),
            ("%2$s size %1$s yeni mesaj", ["3", "Bob"], "Bob size 3 yeni mesaj"),
            ("%s and %s", ["a", "b"], "a and b"),
            ("%2$s, %s, %s", ["a", "b"], "b, a, b"),
            ("%1$s then %<s", ["x"], "x then x"),
            ("up %1$s%% today%n", ["1.43"], "up 1.43% today\n"),
            ("%%%1$s", ["1.43"], "%1.43"),
            ("[%5s|%-5s|%.2s]", ["ab", "cd", "xyz"], "[   ab|cd   |xy]"),
            ("%S", ["i"], "I"),
            ("%b", ["no"], "true"),
            ("%h", ["hello"], "5e918d2"),
            ("no specifiers", ["extra"], "no specifiers"),
        ])
    func javaFormats(format: String, args: [String], expected: String) {
        #expect(JavaFormat.format(format, args) == .success(expected))
    }

    @Test(
        "Java: the exceptions a String arg or a bad format raise",
        arguments: [
            ("%1$d new messages from %2$s", ["3", "Bob"], "IllegalFormatConversionException", "d != java.lang.String"),
            ("%d", ["3"], "IllegalFormatConversionException", "d != java.lang.String"),
            ("%.2f", ["1.5"], "IllegalFormatConversionException", "f != java.lang.String"),
            ("%c", ["x"], "IllegalFormatConversionException", "c != java.lang.String"),
            ("%tY", ["2024"], "IllegalFormatConversionException", "t != java.lang.String"),
            ("%1$s and %2$s", ["a"], "MissingFormatArgumentException", "Format specifier '%2$s'"),
            ("%s %s", ["a"], "MissingFormatArgumentException", "Format specifier '%s'"),
            ("100%", [], "UnknownFormatConversionException", "Conversion = '%'"),
            ("%q", ["a"], "UnknownFormatConversionException", "Conversion = 'q'"),
            ("%-s", ["a"], "MissingFormatWidthException", "%-s"),
            ("%#s", ["a"], "FormatFlagsConversionMismatchException", "Conversion = s, Flags = #"),
            ("%+s", ["a"], "FormatFlagsConversionMismatchException", "Conversion = s, Flags = +"),
            ("%,s", ["a"], "FormatFlagsConversionMismatchException", "Conversion = s, Flags = ,"),
            ("%0s", ["a"], "MissingFormatWidthException", "%0s"),
            ("%-%", [], "MissingFormatWidthException", "%-%"),
            ("%-5n", [], "IllegalFormatFlagsException", "Flags = '-'"),
            ("%<s", ["a"], "MissingFormatArgumentException", "Format specifier '%<s'"),
            ("%.s", ["a"], "UnknownFormatConversionException", "Conversion = '.'"),
            ("%5", ["a"], "UnknownFormatConversionException", "Conversion = '%'"),
            ("%*s", ["a"], "UnknownFormatConversionException", "Conversion = '*'"),
            ("%t", ["a"], "UnknownFormatConversionException", "Conversion = 't'"),
            ("%tq", ["a"], "UnknownFormatConversionException", "Conversion = 'tq'"),
            ("%ls", ["a"], "UnknownFormatConversionException", "Conversion = 'l'"),
            ("%-s then %q", ["a"], "MissingFormatWidthException", "%-s"),
        ])
    func javaExceptions(format: String, args: [String], name: String, message: String) {
        #expect(JavaFormat.format(format, args) == .failure(JavaFormat.Exception(name: name, message: message)))
    }

    @Test("only MissingFormatArgumentException is caught by FCM")
    func caught() {
        #expect(JavaFormat.Exception(name: "MissingFormatArgumentException", message: "").isCaughtByFCM)
        #expect(!JavaFormat.Exception(name: "IllegalFormatConversionException", message: "").isCaughtByFCM)
    }

    @Test("Java: specifiers with their argument index and signature")
    func javaSpecifiers() throws {
        let specs = try JavaFormat.parse("%2$s sent %1$d, %s and %%").get().specifiers
        #expect(specs.map(\.argument) == [2, 1, 1, nil])
        #expect(specs.map(\.isPositional) == [true, true, false, false])
        #expect(specs.map(\.signature) == ["2$s", "1$d", "1$s", "-$%"])
        #expect(try JavaFormat.parse("%3$s %1$s").get().requiredArguments == 3)
    }

    @Test("Java: every part of a specifier, %0$ as ordinary, < and date-time suffixes")
    func javaSpecifierParts() throws {
        let specs = try JavaFormat.parse("a %2$-#10.3s b %0$s %<S %1$tY %TH %%%n").get()
        #expect(specs.first == .literal("a "))
        let s = specs.specifiers
        #expect(s.map(\.text) == ["%2$-#10.3s", "%0$s", "%<S", "%1$tY", "%TH", "%%", "%n"])
        #expect(s.map(\.argument) == [2, 1, 1, 1, 2, nil, nil])
        #expect(s.map(\.isPositional) == [true, false, true, true, false, false, false])
        #expect(s[0].flags == "-#" && s[0].width == 10 && s[0].precision == 3)
        #expect(s.map(\.signature) == ["2$s", "1$s", "1$S", "1$tY", "2$tH", "-$%", "-$n"])
    }

    @Test(
        "Apple: %@, %n$@ and %%",
        arguments: [
            ("Welcome, %1$@!", ["Alice"], "Welcome, Alice!"),
            ("%2$@ size %1$@", ["3", "Bob"], "Bob size 3"),
            ("%@ and %@", ["a", "b"], "a and b"),
            ("up %4$@%% on %1$@", ["FooCorp", "x", "y", "1.43"], "up 1.43% on FooCorp"),
            ("مرحبًا يا \u{2068}%1$@\u{2069}!", ["Alice"], "مرحبًا يا \u{2068}Alice\u{2069}!"),
        ])
    func appleFormats(format: String, args: [String], expected: String) {
        #expect(AppleFormat.format(format, args) == .success(expected))
    }

    @Test(
        "Apple: non-object specifiers and missing args are undefined",
        arguments: [
            ("%d new", ["3"], "%d given a string loc arg"),
            ("%ld new", ["3"], "%ld given a string loc arg"),
            ("%1$s", ["3"], "%1$s given a string loc arg"),
            ("%*@", ["3", "x"], "%*@ given a string loc arg"),
            ("%1$@ and %2$@", ["a"], "%2$@ has no loc arg (1 given)"),
            ("100%", [], "invalid format specifier %: the end of the string is not a conversion"),
            ("%5.2k", ["a"], "invalid format specifier %5.2k: 'k' is not a conversion"),
            ("%5.2q", ["a"], "invalid format specifier %5.2q: the end of the string is not a conversion"),
            ("%1$ll", ["a"], "invalid format specifier %1$ll: the end of the string is not a conversion"),
            ("%s and %1$@", ["a"], "%s given a string loc arg"),
        ])
    func appleFailures(format: String, args: [String], message: String) throws {
        guard case .failure(let f) = AppleFormat.format(format, args) else {
            Issue.record("expected a failure for \(format)")
            return
        }
        #expect(f.message.contains(message))
    }

    @Test("Apple: length modifiers are part of the signature")
    func appleSpecifiers() throws {
        let specs = try AppleFormat.parse("%1$ld %2$@").get().specifiers
        #expect(specs.map(\.signature) == ["1$ld", "2$@"])
        #expect(specs.map(\.isPositional) == [true, true])
        #expect(try AppleFormat.parse("%lld %@").get().specifiers.map(\.signature) == ["1$lld", "2$@"])
    }

    @Test("Apple: * takes an argument of its own, a bare . is precision 0, %% keeps no length")
    func appleSpecifierParts() throws {
        let s = try AppleFormat.parse("%*d %@ %.*@ %0$@ %'-5.@ %l% %hhx %qd %zu %jd %td %Lf").get().specifiers
        #expect(s.map(\.argument) == [2, 3, 5, 6, 7, nil, 8, 9, 10, 11, 12, 13])
        #expect(s.map(\.isPositional) == [false, false, false, true, false, false, false, false, false, false, false, false])
        #expect(s.map(\.flags) == ["*", "", "*", "", "'-", "", "", "", "", "", "", ""])
        #expect(s[4].width == 5 && s[4].precision == 0)
        #expect(s.map(\.signature) == ["2$d", "3$@", "5$@", "6$@", "7$@", "-$%", "8$hhx", "9$qd", "10$zu", "11$jd", "12$td", "13$Lf"])
        #expect(s.map(AppleFormat.acceptsString) == [false, true, false, true, true, false, false, false, false, false, false, false])
    }

    @Test("Apple: %2@ is a width, not arg 2: the args go in order and the width pads nothing; Java pads its %5s")
    func appleWidthReadAsIndex() throws {
        let s = try AppleFormat.parse("%2@ %1@ %2$@ %@ %-5@ %.2@ %02@ %2d %*@").get().specifiers
        #expect(s.map(AppleFormat.widthReadAsIndex) == [2, 1, nil, nil, nil, nil, nil, nil, nil])
        #expect(s.prefix(2).map(\.argument) == [1, 2])
        #expect(AppleFormat.format("%2@ added %1@.", ["Ann", "Bob"]) == .success("Ann added Bob."))
        #expect(AppleFormat.format("[%5@|%-5@]", ["Al", "Bo"]) == .success("[Al|Bo]"))
        #expect(JavaFormat.format("[%5s|%-5s]", ["Al", "Bo"]) == .success("[   Al|Bo   ]"))
    }
}
