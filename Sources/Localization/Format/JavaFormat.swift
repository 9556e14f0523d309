/// Java `java.util.Formatter` semantics, as Android's `Resources.getString(id, args)` applies
/// them to a string resource with FCM's loc args, which are always `String`s.
///
/// Parsing follows `Formatter`'s pattern `%[index$][flags][width][.precision]conversion` (``grammar``:
/// `<` reuses the previous argument, `%0$s` counts as ordinary); formatting raises the
/// exception Java would: `%d`, `%f`, `%c`, `%x`, `%t…` with a `String` throw
/// `IllegalFormatConversionException` (FCM does not catch it: the app crashes when the push is
/// shown in the background); a missing argument throws `MissingFormatArgumentException` (FCM
/// catches that one and shows the default text).
public enum JavaFormat {
    /// A Java exception: its simple class name and `getMessage()`.
    public struct Exception: Error, Sendable, Equatable, CustomStringConvertible {
        public var name: String
        public var message: String

        public init(name: String, message: String) {
            self.name = name
            self.message = message
        }

        /// Whether FCM's `NotificationParams` catches it (only `MissingFormatArgumentException`);
        /// any other escapes and crashes the app when a background notification is built.
        public var isCaughtByFCM: Bool { name == "MissingFormatArgumentException" }

        public var description: String { "\(name): \(message)" }
    }

    /// `Formatter`'s grammar: no `*` and no length modifiers; a `.` needs digits; `%t`/`%T`
    /// take a date-time suffix. As in C, digits name an argument only before a `$` ("The first
    /// argument is referenced by `1$`"); without it they are the width, "the minimum number of
    /// characters to be written": `%2s` takes the next argument and pads it, where Apple's `%2@`
    /// pads nothing (``AppleFormat/widthReadAsIndex(_:)``).
    static let grammar = FormatGrammar(
        flags: Set("-#+ 0,(<"), starAmounts: false, barePeriod: .unknownConversion, lengthModifiers: [],
        conversions: Set("bBhHsScCdoxXeEfgGaA%n"), dateTimeConversions: ["t", "T"],
        dateTimeSuffixes: Set("HIklMSLNpzZsQBbhAaCYyjmdeRTrDFc"))

    /// Splits a format string the way `Formatter.parse` does.
    /// - Returns: the segments, or the exception parsing throws (`UnknownFormatConversionException`,
    ///   `MissingFormatWidthException`, `FormatFlagsConversionMismatchException` …).
    public static func parse(_ format: String) -> Result<[FormatSegment], Exception> {
        var ordinary = 0
        var last: Int?
        return FormatScanner.segments(
            of: format, grammar: grammar, scanFailure: { unknownConversion($0.found ?? "%") },
            resolve: { resolve($0, ordinary: &ordinary, last: &last) })
    }

    /// Checks a specifier as `Formatter` does and gives it its argument: `n$`, the previous
    /// one's for `<`, else the next ordinary one.
    private static func resolve(_ s: ScannedSpecifier, ordinary: inout Int, last: inout Int?) -> Result<FormatSpecifier, Exception> {
        if s.conversion == "%" || s.conversion == "n" {
            if s.conversion == "n", !s.flags.isEmpty || s.width != nil || s.precision != nil {
                return .failure(Exception(name: "IllegalFormatFlagsException", message: "Flags = '\(s.flags)'"))
            }
            if s.flags.contains("-") && s.width == nil {
                return .failure(Exception(name: "MissingFormatWidthException", message: s.text))
            }
            return .success(s.specifier(argument: nil, isPositional: false))
        }
        if (s.flags.contains("-") || s.flags.contains("0")) && s.width == nil {
            return .failure(Exception(name: "MissingFormatWidthException", message: s.text))
        }
        if s.conversion == "s" || s.conversion == "S" {
            let bad = s.flags.filter { "+ 0,(".contains($0) }
            if !bad.isEmpty {
                return .failure(Exception(name: "FormatFlagsConversionMismatchException", message: "Conversion = \(s.conversion), Flags = \(bad)"))
            }
        }
        let argument: Int
        var positional = false
        if s.flags.contains("<") {
            guard let last else {
                return .failure(Exception(name: "MissingFormatArgumentException", message: "Format specifier '\(s.text)'"))
            }
            argument = last
            positional = true
        } else if let index = s.index, index > 0 {
            argument = index
            positional = true
        } else {
            ordinary += 1
            argument = ordinary
        }
        last = argument
        return .success(s.specifier(argument: argument, isPositional: positional))
    }

    /// `String.format(format, args)` with `String` arguments.
    public static func format(_ format: String, _ args: [String]) -> Result<String, Exception> {
        parse(format).flatMap { segments in
            segments.rendered { spec in
                switch spec.conversion {
                case "%": return .success(pad("%", spec))
                case "n": return .success("\n")
                default:
                    guard let index = spec.argument, index <= args.count else {
                        return .failure(Exception(name: "MissingFormatArgumentException", message: "Format specifier '\(spec.text)'"))
                    }
                    return render(spec, args[index - 1])
                }
            }
        }
    }

    /// Whether a conversion prints a `String` argument as text (`%s`, `%S`).
    public static func acceptsString(_ spec: FormatSpecifier) -> Bool {
        spec.conversion == "s" || spec.conversion == "S"
    }

    private static func render(_ spec: FormatSpecifier, _ arg: String) -> Result<String, Exception> {
        switch spec.conversion {
        case "s", "S":
            if spec.flags.contains("#") {
                // Only java.util.Formattable takes '#'; a String does not.
                return .failure(Exception(name: "FormatFlagsConversionMismatchException", message: "Conversion = s, Flags = #"))
            }
            let s = spec.conversion == "S" ? arg.uppercased() : arg
            return .success(pad(truncate(s, spec.precision), spec))
        case "b", "B":
            let s = spec.conversion == "B" ? "TRUE" : "true"  // any non-null, non-Boolean argument
            return .success(pad(truncate(s, spec.precision), spec))
        case "h", "H":
            let hex = String(UInt32(bitPattern: javaHashCode(arg)), radix: 16)
            return .success(pad(truncate(spec.conversion == "H" ? hex.uppercased() : hex, spec.precision), spec))
        default:
            return .failure(Exception(name: "IllegalFormatConversionException", message: "\(spec.conversion) != java.lang.String"))
        }
    }

    /// `String.hashCode()`: s[0]*31^(n-1) + … over UTF-16 units, wrapping.
    static func javaHashCode(_ s: String) -> Int32 {
        s.utf16.reduce(Int32(0)) { $0 &* 31 &+ Int32($1) }
    }

    private static func truncate(_ s: String, _ precision: Int?) -> String {
        guard let precision, s.count > precision else { return s }
        return String(s.prefix(precision))
    }

    private static func pad(_ s: String, _ spec: FormatSpecifier) -> String {
        guard let width = spec.width, s.count < width else { return s }
        let padding = String(repeating: " ", count: width - s.count)
        return spec.flags.contains("-") ? s + padding : padding + s
    }

    private static func unknownConversion(_ c: String) -> Exception {
        Exception(name: "UnknownFormatConversionException", message: "Conversion = '\(c)'")
    }
}
