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

    static let conversions: Set<Character> = Set("@dDiuUxXoOfFeEgGcCsSpaAn%")
    static let lengthModifiers = ["hh", "ll", "h", "l", "q", "L", "z", "t", "j"]

    /// Splits a format string into literal text and specifiers.
    public static func parse(_ format: String) -> Result<[FormatSegment], Failure> {
        let chars = Array(format)
        var segments: [FormatSegment] = []
        var literal = ""
        var ordinary = 0
        var i = 0
        while i < chars.count {
            guard chars[i] == "%" else {
                literal.append(chars[i])
                i += 1
                continue
            }
            let start = i
            i += 1
            var explicit: Int?
            var j = i
            while j < chars.count, chars[j].isASCII, chars[j].isNumber { j += 1 }
            if j > i, j < chars.count, chars[j] == "$" {
                explicit = Int(String(chars[i..<j]))
                i = j + 1
            }
            var flags = ""
            while i < chars.count, "-+ #0'".contains(chars[i]) {
                flags.append(chars[i])
                i += 1
            }
            var width: Int?
            var starArguments = 0
            if i < chars.count, chars[i] == "*" {
                starArguments += 1
                i += 1
            } else {
                j = i
                while j < chars.count, chars[j].isASCII, chars[j].isNumber { j += 1 }
                if j > i {
                    width = Int(String(chars[i..<j]))
                    i = j
                }
            }
            var precision: Int?
            if i < chars.count, chars[i] == "." {
                i += 1
                if i < chars.count, chars[i] == "*" {
                    starArguments += 1
                    i += 1
                } else {
                    j = i
                    while j < chars.count, chars[j].isASCII, chars[j].isNumber { j += 1 }
                    precision = Int(String(chars[i..<j])) ?? 0
                    i = j
                }
            }
            var length = ""
            for m in lengthModifiers where String(chars[i..<min(i + m.count, chars.count)]) == m {
                length = m
                i += m.count
                break
            }
            guard i < chars.count, conversions.contains(chars[i]) else {
                let found = i < chars.count ? "'\(chars[i])'" : "the end of the string"
                return .failure(
                    Failure(message: "invalid format specifier \(String(chars[start..<min(i + 1, chars.count)])): \(found) is not a conversion"))
            }
            let conversion = chars[i]
            i += 1
            let text = String(chars[start..<i])
            segments.flush(&literal)
            if conversion == "%" {
                segments.append(
                    .specifier(
                        FormatSpecifier(
                            text: text, argument: nil, isPositional: false, conversion: "%",
                            flags: flags, width: width, precision: precision)))
                continue
            }
            if starArguments > 0 {
                // `*` takes an int argument; loc args are strings.
                ordinary += starArguments
            }
            let argument: Int
            if let explicit, explicit > 0 {
                argument = explicit
            } else {
                ordinary += 1
                argument = ordinary
            }
            var spec = FormatSpecifier(
                text: text, argument: argument, isPositional: explicit != nil, conversion: conversion,
                flags: flags, width: width, precision: precision)
            spec.length = length
            if starArguments > 0 { spec.flags += "*" }
            segments.append(.specifier(spec))
        }
        segments.flush(&literal)
        return .success(segments)
    }

    /// Whether a specifier takes an object (a loc arg): `%@` / `%n$@` without `*`.
    public static func acceptsString(_ spec: FormatSpecifier) -> Bool {
        spec.conversion == "@" && !spec.flags.contains("*")
    }

    /// Formats with string arguments, or says why the result is undefined.
    public static func format(_ format: String, _ args: [String]) -> Result<String, Failure> {
        let segments: [FormatSegment]
        switch parse(format) {
        case .success(let s): segments = s
        case .failure(let f): return .failure(f)
        }
        var out = ""
        for segment in segments {
            switch segment {
            case .literal(let s):
                out += s
            case .specifier(let spec):
                if spec.conversion == "%" {
                    out += "%"
                    continue
                }
                guard acceptsString(spec) else {
                    return .failure(Failure(message: "\(spec.text) given a string loc arg: undefined behaviour (use %@ or %n$@)"))
                }
                guard let index = spec.argument, index <= args.count else {
                    return .failure(Failure(message: "\(spec.text) has no loc arg (\(args.count) given): undefined behaviour"))
                }
                out += args[index - 1]
            }
        }
        return .success(out)
    }
}
