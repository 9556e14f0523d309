/// The qualifiers of an Android resource directory name: `values`, `values-fr`,
/// `values-pt-rBR`, `values-b+sr+Latn`, `values-fr-night`.
public struct ResourceQualifier: Sendable, Equatable {
    /// The locale as a BCP 47 tag (`fr`, `pt-BR`, `sr-Latn`), nil for the default resources.
    public var locale: String?
    /// Qualifiers other than the locale (`night`, `v21`, `land`, `mcc310` …).
    public var others: [String]

    public init(locale: String?, others: [String]) {
        self.locale = locale
        self.others = others
    }

    /// Parses a directory name; nil if it is not a `values` directory.
    public static func parse(directoryName name: String) -> ResourceQualifier? {
        var parts = name.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard parts.first == "values" else { return nil }
        parts.removeFirst()
        var result = ResourceQualifier(locale: nil, others: [])
        var i = 0
        // Mobile country and network codes come before the locale.
        while i < parts.count, parts[i].hasPrefix("mcc") || parts[i].hasPrefix("mnc") {
            result.others.append(parts[i])
            i += 1
        }
        if i < parts.count, parts[i].hasPrefix("b+") {
            let subtags = parts[i].dropFirst(2).split(separator: "+").map(String.init)
            if let tag = Self.bcp47(subtags) { result.locale = tag } else { result.others.append(parts[i]) }
            i += 1
        } else if i < parts.count, Self.isLanguage(parts[i]) {
            var tag = parts[i].lowercased()
            i += 1
            if i < parts.count, parts[i].count == 3, parts[i].hasPrefix("r"), parts[i].dropFirst().allSatisfy(\.isLetter) {
                tag += "-" + parts[i].dropFirst().uppercased()
                i += 1
            }
            result.locale = tag
        }
        result.others.append(contentsOf: parts[i...])
        return result
    }

    private static func isLanguage(_ s: String) -> Bool {
        (2...3).contains(s.count) && s.allSatisfy { $0.isASCII && $0.isLowercase }
    }

    /// `sr`, `Latn` → `sr-Latn`; `es`, `419` → `es-419`.
    static func bcp47(_ subtags: [String]) -> String? {
        guard let language = subtags.first, (2...8).contains(language.count), language.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            return nil
        }
        var tag = [language.lowercased()]
        for s in subtags.dropFirst() {
            guard !s.isEmpty, s.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
            if s.count == 4, s.allSatisfy(\.isLetter) {
                tag.append(s.prefix(1).uppercased() + s.dropFirst().lowercased())
            } else if s.count == 2 || (s.count == 3 && s.allSatisfy(\.isNumber)) {
                tag.append(s.uppercased())
            } else {
                tag.append(s.lowercased())
            }
        }
        return tag.joined(separator: "-")
    }
}
