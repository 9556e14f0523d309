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
            ("100%", [], "invalid format specifier"),
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
}
