/// Apple `String(format:)` / `NSString stringWithFormat:` semantics for notification loc args,
/// which iOS substitutes as objects (`NSString`): `%@` and `%n$@` take them; `%%` is a percent
/// sign. Any other conversion given a string argument (`%d`, `%ld`, `%s` …) is undefined
/// behaviour, so formatting reports a failure instead of inventing text.
public enum AppleFormat {
    /// Why iOS cannot show a string.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String

        public init(message: String) {
            self.message = message
        }

        public var description: String { message }
    }

    /// C's grammar: `*` for the width and the precision, a bare `.` as precision 0, length
    /// modifiers, and `@` for an object.
    static let grammar = FormatGrammar(
        flags: Set("-+ #0'"), starAmounts: true, barePeriod: .zeroPrecision,
        lengthModifiers: ["hh", "ll", "h", "l", "q", "L", "z", "t", "j"], conversions: Set("@dDiuUxXoOfFeEgGcCsSpaAn%"))

    /// Splits a format string into literal text and specifiers.
    public static func parse(_ format: String) -> Result<[FormatSegment], Failure> {
        var ordinary = 0
        return FormatScanner.segments(
            of: format, grammar: grammar,
            scanFailure: { error in
                let found = error.found.map { "'\($0)'" } ?? "the end of the string"
                return Failure(message: "invalid format specifier \(error.text): \(found) is not a conversion")
            },
            resolve: { .success(resolve($0, ordinary: &ordinary)) })
    }

    /// Gives a specifier its argument: `n$` (from 1), else the next ordinary one after those its
    /// `*`s take. `%%` takes none, and keeps no length modifier.
    private static func resolve(_ s: ScannedSpecifier, ordinary: inout Int) -> FormatSpecifier {
        if s.conversion == "%" {
            return FormatSpecifier(
                text: s.text, argument: nil, isPositional: false, conversion: "%", flags: s.flags, width: s.width, precision: s.precision)
        }
        // Each `*` takes an int argument; loc args are strings.
        ordinary += s.stars
        let argument: Int
        if let index = s.index, index > 0 {
            argument = index
        } else {
            ordinary += 1
            argument = ordinary
        }
        var specifier = s.specifier(argument: argument, isPositional: s.index != nil)
        if s.stars > 0 { specifier.flags += "*" }
        return specifier
    }

    /// Whether a specifier takes an object (a loc arg): `%@` / `%n$@` without `*`.
    public static func acceptsString(_ spec: FormatSpecifier) -> Bool {
        spec.conversion == "@" && !spec.flags.contains("*")
    }

    /// The number written in a `%2@`: a specifier with digits and no `$`, which reads as an
    /// argument number but is a field width. Apple's String Format Specifiers (String Programming
    /// Guide) follow the IEEE printf specification, where only `%n$` names an argument ("the
    /// conversion is applied to the nth argument") and digits without it are the minimum field
    /// width; so `String(format:)` gives it the next argument in order. Java's `Formatter` reads
    /// digits the same way (`%[argument_index$][flags][width]`), but pads a `%2s` to the width,
    /// where CoreFoundation's formatter appends an object's description as is (CFString.c, the
    /// `%@` case: no padding, as Foundation on Linux shows too), so a name is shown unpadded.
    /// Nil for any other specifier, and for one with flags or a precision (`%-10@`), which reads
    /// as the layout it is.
    public static func widthReadAsIndex(_ spec: FormatSpecifier) -> Int? {
        guard spec.conversion == "@", !spec.isPositional, spec.flags.isEmpty, spec.precision == nil, let width = spec.width, width > 0
        else { return nil }
        return width
    }

    /// Formats with string arguments, or says why the result is undefined. A width or precision
    /// on `%@` is ignored, as CoreFoundation ignores it (``widthReadAsIndex(_:)``).
    public static func format(_ format: String, _ args: [String]) -> Result<String, Failure> {
        parse(format).flatMap { segments in
            segments.rendered { spec in
                if spec.conversion == "%" { return .success("%") }
                guard acceptsString(spec) else {
                    return .failure(Failure(message: "\(spec.text) given a string loc arg: undefined behaviour (use %@ or %n$@)"))
                }
                guard let index = spec.argument, index <= args.count else {
                    return .failure(Failure(message: "\(spec.text) has no loc arg (\(args.count) given): undefined behaviour"))
                }
                return .success(args[index - 1])
            }
        }
    }
}
