/// One problem the linter reports.
public struct Finding: Sendable, Equatable, Codable {
    /// What was checked; stable names for CI (`--format json`).
    public enum Rule: String, Sendable, Codable, CaseIterable {
        /// A resource file could not be read or parsed.
        case parseError = "parse-error"
        /// Android: aapt2 refuses a value (an unescaped apostrophe, a bad `\u` escape, a
        /// `translatable` that is not a boolean), so no build has the file; or reads it otherwise
        /// than meant (an unmatched double quote).
        case androidBuild = "aapt2"
        /// The key is not in the default resources (an error: every locale falls back to them).
        case missingDefault = "missing-default"
        /// The key is not translated for a locale (a warning).
        case missingLocale = "missing-locale"
        /// The mapping sends fewer (error) or more (warning) args than the string uses.
        case argumentCount = "arg-count"
        /// Android: a specifier other than `%s`/`%n$s` receives a loc arg (a crash for `%d`).
        case androidSpecifier = "android-specifier"
        /// Android: `%s` without an index while several args are sent.
        case androidNonPositional = "android-non-positional"
        /// iOS: a specifier other than `%@`/`%n$@` receives a loc arg.
        case iosSpecifier = "ios-specifier"
        /// A translation's specifiers differ from its default string's.
        case translationMismatch = "translation-mismatch"
        /// The key names a plural resource, which a loc key cannot select from.
        case plural
        /// The key names an Android `<string-array>`.
        case stringArray = "string-array"
        /// The key exists for one platform but its counterpart exists nowhere on the other.
        case crossPlatform = "cross-platform"
        /// A String Catalog translation is not in the `translated` state.
        case translationState = "translation-state"
    }

    /// A mapping that sends the key.
    public struct Use: Sendable, Equatable, Codable {
        public var eventType: String
        public var field: KeyUse.Field
        public var argumentCount: Int
        public var location: SourceLocation
    }

    public var severity: Severity
    public var rule: Rule
    public var platform: DevicePlatform?
    /// The locale concerned, if the finding is about one (nil: the default resources).
    public var locale: String?
    public var key: String?
    public var message: String
    /// The resource the finding is about, if there is one.
    public var resource: SourceLocation?
    /// The mappings that send the key.
    public var uses: [Use]

    public init(
        _ severity: Severity, _ rule: Rule, platform: DevicePlatform?, locale: String? = nil, key: String?,
        message: String, resource: SourceLocation? = nil, uses: [Use] = []
    ) {
        self.severity = severity
        self.rule = rule
        self.platform = platform
        self.locale = locale
        self.key = key
        self.message = message
        self.resource = resource
        self.uses = uses
    }

    /// The place an editor should jump to: the resource if any, else the first mapping.
    public var primaryLocation: SourceLocation? { resource ?? uses.first?.location }

    /// Compiler-style lines: `file:line: error: message [rule]`, then one
    /// `file:line: note: …` per mapping that sends the key.
    public var text: String {
        let location = primaryLocation.map { "\($0): " } ?? ""
        var lines = ["\(location)\(severity.rawValue): \(message) [\(rule.rawValue)]"]
        for use in uses {
            let args = "\(use.argumentCount) arg\(use.argumentCount == 1 ? "" : "s")"
            lines.append("\(use.location): note: sent as the \(use.field.rawValue) of \(use.eventType) with \(args)")
        }
        return lines.joined(separator: "\n")
    }
}
