/// One placeholder of a format string (Java `Formatter` or Apple `String(format:)`), as the
/// linter and the previewer see it.
public struct FormatSpecifier: Sendable, Equatable, Hashable {
    /// As written, e.g. `%1$d`, `%@`, `%-10s`.
    public var text: String
    /// The 1-based argument it consumes, or nil for `%%` and `%n`.
    public var argument: Int?
    /// Whether the index was written (`%2$s`) rather than implied by position (`%s`).
    public var isPositional: Bool
    /// The conversion character: `s`, `d`, `@`, `%` …
    public var conversion: Character
    /// Flags as written (`-`, `#`, `0` …).
    public var flags: String
    public var width: Int?
    public var precision: Int?
    /// Apple length modifier (`l`, `ll`, `h` …), empty if none.
    public var length: String = ""
    /// Java `%t`/`%T` date-time suffix.
    public var dateTimeSuffix: Character?

    /// Whether it looks meant as a placeholder where nothing formats the string: written with an
    /// index (`%1$s`) or bare (`%s`, `%@`), unlike the `% f` of a literal "100% f…".
    var looksMeant: Bool { isPositional || (flags.isEmpty && width == nil && precision == nil) }

    /// The argument index and conversion, which translations must keep: `1$d`, `2$@`.
    public var signature: String {
        "\(argument.map(String.init) ?? "-")$\(length)\(dateTimeSuffix.map { "t\($0)" } ?? String(conversion))"
    }
}

/// A format string split into literal text and specifiers.
public enum FormatSegment: Sendable, Equatable {
    case literal(String)
    case specifier(FormatSpecifier)
}

extension Array where Element == FormatSegment {
    /// The specifiers, in order.
    public var specifiers: [FormatSpecifier] {
        compactMap { if case .specifier(let s) = $0 { s } else { nil } }
    }

    /// The number of arguments the string needs: its highest argument index (0 if none).
    public var requiredArguments: Int {
        specifiers.compactMap(\.argument).max() ?? 0
    }

    /// The literal text with each specifier replaced by what `render` makes of it, or the first
    /// failure `render` returns.
    func rendered<Failure: Error>(_ render: (FormatSpecifier) -> Result<String, Failure>) -> Result<String, Failure> {
        var out = ""
        for segment in self {
            switch segment {
            case .literal(let text):
                out += text
            case .specifier(let specifier):
                switch render(specifier) {
                case .success(let text): out += text
                case .failure(let failure): return .failure(failure)
                }
            }
        }
        return .success(out)
    }
}
