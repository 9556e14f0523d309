/// Which phone OS a resource or a localization key belongs to.
public enum DevicePlatform: String, Sendable, Codable, CaseIterable, Comparable {
    case android, ios

    public static func < (a: DevicePlatform, b: DevicePlatform) -> Bool { a.rawValue < b.rawValue }

    /// "Android" or "iOS", for messages.
    public var displayName: String { self == .android ? "Android" : "iOS" }
}

/// A place in a file, printed `file:line`.
public struct SourceLocation: Sendable, Hashable, Codable, CustomStringConvertible {
    public var file: String
    public var line: Int

    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    public var description: String { "\(file):\(line)" }
}

/// One localized resource: a string, or something a loc key cannot use (plurals, arrays).
public struct ResourceEntry: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable {
        /// A plain string (`<string>`, a `.strings` pair, an xcstrings `stringUnit`).
        case string
        /// Android `<plurals>`.
        case plurals
        /// Android `<string-array>`.
        case stringArray = "string-array"
        /// An iOS `.stringsdict` entry with a plural rule.
        case stringsdictPlural = "stringsdict-plural"
        /// An iOS String Catalog entry with plural variations (or plural substitutions).
        case xcstringsPlural = "xcstrings-plural"

        /// How messages name it.
        public var displayName: String {
            switch self {
            case .string: "a string"
            case .plurals: "a <plurals> resource"
            case .stringArray: "a <string-array>"
            case .stringsdictPlural: "a .stringsdict plural"
            case .xcstringsPlural: "a String Catalog plural variation"
            }
        }
    }

    public var key: String
    public var kind: Kind
    /// The text as the OS holds it after parsing (escapes decoded, markup removed). For plurals,
    /// the `other` form.
    public var value: String
    public var location: SourceLocation
    /// Android `formatted="false"` (aapt stops checking its specifiers; `getString(id, args)`
    /// still formats it).
    public var formatted = true
    /// Android `translatable="false"`, String Catalog `shouldTranslate: false`: no translation expected.
    public var translatable = true
    /// A String Catalog `stringUnit.state` (`translated`, `needs_review`, `new`, `stale`).
    public var state: String?
    /// Android: the value is a reference, `@string/name`; the entry's text is that resource's.
    public var reference: String?

    public init(key: String, kind: Kind, value: String, location: SourceLocation) {
        self.key = key
        self.kind = kind
        self.value = value
        self.location = location
    }
}

/// How bad a finding or a problem in a resource file is.
public enum Severity: String, Sendable, Codable, Comparable {
    case warning, error

    public static func < (a: Severity, b: Severity) -> Bool { a == .warning && b == .error }
}

/// A problem found while reading a resource file (a parse error, a duplicate key, a value the
/// Android build refuses).
public struct ResourceProblem: Sendable, Equatable, Error, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The file cannot be read or parsed.
        case parse
        /// The file parses, but aapt2 (the Android build) refuses it, or reads a value otherwise
        /// than its author meant.
        case androidBuild
    }

    public var severity: Severity
    public var location: SourceLocation
    public var message: String
    public var kind: Kind
    /// The key the problem is in, when it is in one (not for a file that cannot be parsed).
    public var key: String?
    /// The locale of the file or entry, set by the catalog that reads it; nil for the default
    /// resources (`values/`, the development language), as for a ``Finding``.
    public var locale: String?

    public init(_ severity: Severity, _ location: SourceLocation, _ message: String, kind: Kind = .parse, key: String? = nil) {
        self.severity = severity
        self.location = location
        self.message = message
        self.kind = kind
        self.key = key
    }

    /// The same problem, in a locale's resources (nil: the default ones).
    func `in`(_ locale: String?) -> ResourceProblem {
        var problem = self
        problem.locale = locale
        return problem
    }

    public var description: String { "\(location): \(severity.rawValue): \(message)" }
}

/// What a parser made of one resource file.
public struct ParsedResources: Sendable {
    public var entries: [ResourceEntry] = []
    /// Non-fatal problems (a fatal one is thrown as a ``ResourceProblem``).
    public var problems: [ResourceProblem] = []

    public init(entries: [ResourceEntry] = [], problems: [ResourceProblem] = []) {
        self.entries = entries
        self.problems = problems
    }
}
