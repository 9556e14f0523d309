/// How much of what the mappings send is translated for one locale.
public struct Coverage: Sendable, Equatable, Codable {
    public var platform: DevicePlatform
    public var locale: String
    /// Keys found for the locale (untranslatable ones, and aliases of strings the locale has, count
    /// as found: ``ResourceCatalog/translation(of:in:)``).
    public var present: Int
    /// Keys the mappings send on this platform.
    public var total: Int

    /// Whole percent, rounded down; 100 when nothing is sent.
    public var percent: Int { total == 0 ? 100 : present * 100 / total }

    static func compute(keys: Set<String>, catalog: ResourceCatalog) -> [Coverage] {
        catalog.locales.map { locale in
            let present = keys.filter { key in
                if locale == catalog.defaultLocale { return catalog.defaultTable.entries[key] != nil }
                if case .missing = catalog.translation(of: key, in: locale) { return false }
                return true
            }.count
            return Coverage(platform: catalog.platform, locale: locale, present: present, total: keys.count)
        }
    }
}

/// Everything `pushbridge lint` reports.
public struct LintReport: Sendable, Equatable, Codable {
    public var findings: [Finding]
    public var coverage: [Coverage]

    public var errorCount: Int { findings.filter { $0.severity == .error }.count }
    public var warningCount: Int { findings.filter { $0.severity == .warning }.count }

    /// `3 errors, 5 warnings; coverage android: en 100%, fr 83% (5/6); ios: …`
    public var summary: String {
        let e = errorCount
        let w = warningCount
        var parts = ["\(e) error\(e == 1 ? "" : "s"), \(w) warning\(w == 1 ? "" : "s")"]
        let platforms = Set(coverage.map(\.platform)).sorted()
        if !platforms.isEmpty {
            let figures = platforms.map { p in
                "\(p.rawValue): "
                    + coverage.filter { $0.platform == p }.map { c in
                        c.present == c.total ? "\(c.locale) \(c.percent)%" : "\(c.locale) \(c.percent)% (\(c.present)/\(c.total))"
                    }.joined(separator: ", ")
            }
            parts.append("coverage " + figures.joined(separator: "; "))
        }
        return parts.joined(separator: "; ")
    }

    /// Findings in compiler style, errors first, then the summary line.
    public var text: String {
        let ordered = findings.enumerated().sorted { a, b in
            a.element.severity != b.element.severity ? a.element.severity > b.element.severity : a.offset < b.offset
        }.map(\.element)
        return (ordered.map(\.text) + [summary]).joined(separator: "\n") + "\n"
    }
}
