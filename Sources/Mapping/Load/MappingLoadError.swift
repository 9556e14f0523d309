/// A problem in a mapping file, with where it is and what to do about it.
public struct MappingLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public var message: String
    /// What to do about it, if there is more to say than the message.
    public var hint: String?
    /// An error stops the load; a warning is reported and the mapping loads.
    public var severity: Severity

    public enum Severity: String, Sendable {
        case error, warning
    }

    public init(file: String, line: Int, column: Int, message: String, hint: String? = nil, severity: Severity = .error) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.hint = hint
        self.severity = severity
    }

    /// `file:line:column: error: message (hint)`, as compilers print it.
    public var description: String {
        "\(file):\(line):\(column): \(severity.rawValue): \(message)" + (hint.map { "\n    hint: \($0)" } ?? "")
    }
}

/// Every error found while loading mapping files. Loading fails as a whole.
public struct MappingLoadErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [MappingLoadError]
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
