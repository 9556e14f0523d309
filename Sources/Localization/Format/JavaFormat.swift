/// Java `java.util.Formatter` semantics, as Android's `Resources.getString(id, args)` applies
/// them to a string resource with FCM's loc args, which are always `String`s.
///
/// Parsing follows `Formatter`'s pattern `%[index$][flags][width][.precision]conversion`
/// (`<` reuses the previous argument, `%0$s` counts as ordinary); formatting raises the
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

    static let conversions: Set<Character> = Set("bBhHsScCdoxXeEfgGaA%n")
    static let dateTimeSuffixes: Set<Character> = Set("HIklMSLNpzZsQBbhAaCYyjmdeRTrDFc")
    static let flagCharacters: Set<Character> = Set("-#+ 0,(<")

    /// Splits a format string the way `Formatter.parse` does.
    /// - Returns: the segments, or the exception parsing throws (`UnknownFormatConversionException`,
    ///   `MissingFormatWidthException`, `FormatFlagsConversionMismatchException` …).
    public static func parse(_ format: String) -> Result<[FormatSegment], Exception> {
        let chars = Array(format)
        var segments: [FormatSegment] = []
        var literal = ""
        var ordinary = 0
        var last: Int?
        var i = 0
        while i < chars.count {
            guard chars[i] == "%" else {
                literal.append(chars[i])
                i += 1
                continue
            }
            let start = i
            i += 1
            // [index$]
            var explicit: Int?
            var j = i
            while j < chars.count, chars[j].isASCII, chars[j].isNumber { j += 1 }
            if j > i, j < chars.count, chars[j] == "$" {
                explicit = Int(String(chars[i..<j]))
                i = j + 1
            }
            // [flags]
            var flags = ""
            while i < chars.count, flagCharacters.contains(chars[i]) {
                flags.append(chars[i])
                i += 1
            }
            // [width]
            var width: Int?
            j = i
            while j < chars.count, chars[j].isASCII, chars[j].isNumber { j += 1 }
            if j > i {
                width = Int(String(chars[i..<j]))
                i = j
            }
            // [.precision]
            var precision: Int?
            if i < chars.count, chars[i] == "." {
                j = i + 1
                while j < chars.count, chars[j].isASCII, chars[j].isNumber { j += 1 }
                guard j > i + 1 else { return .failure(unknownConversion(".")) }
                precision = Int(String(chars[(i + 1)..<j]))
                i = j
            }
            guard i < chars.count else { return .failure(unknownConversion("%")) }
            let conversion = chars[i]
            var suffix: Character?
            i += 1
            if conversion == "t" || conversion == "T" {
                guard i < chars.count else { return .failure(unknownConversion(String(conversion))) }
                guard dateTimeSuffixes.contains(chars[i]) else { return .failure(unknownConversion("\(conversion)\(chars[i])")) }
                suffix = chars[i]
                i += 1
            } else if !conversions.contains(conversion) {
                return .failure(unknownConversion(String(conversion)))
            }
            let text = String(chars[start..<i])
            if conversion == "%" || conversion == "n" {
                if conversion == "n", !flags.isEmpty || width != nil || precision != nil {
                    return .failure(Exception(name: "IllegalFormatFlagsException", message: "Flags = '\(flags)'"))
                }
                if flags.contains("-") && width == nil {
                    return .failure(Exception(name: "MissingFormatWidthException", message: text))
                }
                segments.flush(&literal)
                segments.append(
                    .specifier(
                        FormatSpecifier(
                            text: text, argument: nil, isPositional: false, conversion: conversion,
                            flags: flags, width: width, precision: precision)))
                continue
            }
            if (flags.contains("-") || flags.contains("0")) && width == nil {
                return .failure(Exception(name: "MissingFormatWidthException", message: text))
            }
            if conversion == "s" || conversion == "S" {
                let bad = flags.filter { "+ 0,(".contains($0) }
                if !bad.isEmpty {
                    return .failure(Exception(name: "FormatFlagsConversionMismatchException", message: "Conversion = \(conversion), Flags = \(bad)"))
                }
            }
            // Resolve the argument index.
            let argument: Int
            var positional = false
            if flags.contains("<") {
                guard let last else {
                    return .failure(Exception(name: "MissingFormatArgumentException", message: "Format specifier '\(text)'"))
                }
                argument = last
                positional = true
            } else if let explicit, explicit > 0 {
                argument = explicit
                positional = true
            } else {
                ordinary += 1
                argument = ordinary
            }
            last = argument
            segments.flush(&literal)
            var specifier = FormatSpecifier(
                text: text, argument: argument, isPositional: positional, conversion: conversion,
                flags: flags, width: width, precision: precision)
            specifier.dateTimeSuffix = suffix
            segments.append(.specifier(specifier))
        }
        segments.flush(&literal)
        return .success(segments)
    }

    /// `String.format(format, args)` with `String` arguments.
    public static func format(_ format: String, _ args: [String]) -> Result<String, Exception> {
        let segments: [FormatSegment]
        switch parse(format) {
        case .success(let s): segments = s
        case .failure(let e): return .failure(e)
        }
        var out = ""
        for segment in segments {
            switch segment {
            case .literal(let s):
                out += s
            case .specifier(let spec):
                switch spec.conversion {
                case "%": out += pad("%", spec)
                case "n": out += "\n"
                default:
                    guard let index = spec.argument, index <= args.count else {
                        return .failure(Exception(name: "MissingFormatArgumentException", message: "Format specifier '\(spec.text)'"))
                    }
                    switch render(spec, args[index - 1]) {
                    case .success(let s): out += s
                    case .failure(let e): return .failure(e)
                    }
                }
            }
        }
        return .success(out)
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

extension Array where Element == FormatSegment {
    mutating func flush(_ literal: inout String) {
        if !literal.isEmpty { append(.literal(literal)) }
        literal = ""
    }
}
