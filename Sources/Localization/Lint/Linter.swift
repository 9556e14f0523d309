/// Checks the keys mappings send against the app's string resources, per platform and
/// locale (see docs/localization.md for every rule and why).
public enum Linter {
    /// Lints every use against the catalog of its platform; platforms without a catalog are
    /// skipped. Problems found while reading the resources come first.
    public static func lint(uses: [KeyUse], catalogs: [ResourceCatalog]) -> LintReport {
        var collector = Collector()
        for catalog in catalogs {
            for problem in catalog.problems {
                let rule: Finding.Rule = problem.kind == .androidBuild ? .androidBuild : .parseError
                collector.add(
                    Finding(
                        problem.severity, rule, platform: catalog.platform, locale: problem.locale, key: problem.key,
                        message: problem.message, resource: problem.location), use: nil)
            }
        }
        let byPlatform = Dictionary(catalogs.map { ($0.platform, $0) }, uniquingKeysWith: { a, _ in a })
        for use in uses {
            guard let catalog = byPlatform[use.platform] else { continue }
            let other = byPlatform[use.platform == .android ? .ios : .android]
            check(use, catalog, other: other, into: &collector)
        }
        let coverage = catalogs.flatMap { catalog in
            Coverage.compute(keys: Set(uses.filter { $0.platform == catalog.platform }.map(\.key)), catalog: catalog)
        }
        return LintReport(findings: collector.findings, coverage: coverage)
    }

    // MARK: - Per use

    private static func check(_ use: KeyUse, _ catalog: ResourceCatalog, other: ResourceCatalog?, into c: inout Collector) {
        let p = use.platform
        guard let entry = catalog.defaultTable.entries[use.key].map({ follow($0, in: catalog.defaultTable) }) else {
            reportMissingDefault(use, catalog, other: other, into: &c)
            return
        }
        if !checkKind(entry, locale: nil, use, into: &c) { return }
        // Without args a placeholder shows as is in every locale whose string has one: one
        // finding, at the default string, naming the translations (one fix, the mapping sending
        // the args, clears them all); a translation that adds one is a translation-mismatch.
        let shownAsIs = use.argumentCount == 0 ? translationsWithPlaceholders(use, catalog) : []
        let defaultSpecs = checkString(entry, locale: nil, use, countArguments: true, alsoIn: shownAsIs, into: &c)
        for locale in catalog.locales.dropFirst() {
            let translated: ResourceEntry
            switch catalog.translation(of: use.key, in: locale) {
            case .translated(let e):
                translated = e
            case .notExpected:
                continue
            case .missing(let via):
                let alias = via.last.map { " (via @string/\($0))" } ?? ""
                let what =
                    p == .android
                    ? "Android falls back to the default string there"
                    : "iOS shows the key itself, \"\(use.key)\", there (no per-key fallback to \(catalog.defaultLocale))"
                c.add(
                    Finding(
                        .warning, .missingLocale, platform: p, locale: locale, key: use.key,
                        message: "\(use.key)\(alias) is not translated for \(locale): \(what)",
                        resource: entry.location), use: use)
                continue
            }
            guard checkKind(translated, locale: locale, use, into: &c) else { continue }
            if let state = translated.state, state != "translated" {
                c.add(
                    Finding(
                        .warning, .translationState, platform: p, locale: locale, key: use.key,
                        message: "\(use.key) in \(locale) is in state \"\(state)\", not \"translated\"",
                        resource: translated.location), use: use)
            }
            let specs = checkString(translated, locale: locale, use, countArguments: false, into: &c)
            if use.argumentCount == 0 { checkUnformattedPercent(translated, locale: locale, use, into: &c) }
            if let specs, let defaultSpecs {
                // Without args nothing is formatted: compare only specifiers that look meant.
                let meant = { (s: [FormatSpecifier]) in use.argumentCount > 0 ? s : s.filter(\.looksMeant) }
                compare(meant(specs), meant(defaultSpecs), translated, entry, locale: locale, use, into: &c)
            }
        }
    }

    /// The locales (not the default) whose own string for the key has a placeholder that looks meant.
    private static func translationsWithPlaceholders(_ use: KeyUse, _ catalog: ResourceCatalog) -> [String] {
        catalog.locales.dropFirst().filter { locale in
            guard case .translated(let entry) = catalog.translation(of: use.key, in: locale) else { return false }
            let segments = use.platform == .android ? try? JavaFormat.parse(entry.value).get() : try? AppleFormat.parse(entry.value).get()
            return segments?.specifiers.contains { $0.argument != nil && $0.looksMeant } == true
        }
    }

    private static func follow(_ entry: ResourceEntry, in table: LocaleTable) -> ResourceEntry {
        var e = entry
        var hops = 0
        while let target = e.reference, let next = table.entries[target], hops < 8 {
            e = next
            hops += 1
        }
        return e
    }

    private static func reportMissingDefault(_ use: KeyUse, _ catalog: ResourceCatalog, other: ResourceCatalog?, into c: inout Collector) {
        let p = use.platform
        if let at = catalog.manualKeysWithoutSource[use.key] {
            reportManualKey(use, at: at, catalog, into: &c)
            return
        }
        let impact =
            p == .android
            ? "the device finds no string resource and shows the plain \(use.field.rawValue) instead (\(use.field == .title ? "none is sent: the app's name" : "none is sent: no text"))"
            : "iOS shows the key itself, \"\(use.key)\""
        if !catalog.containsAnywhere(use.key), let counterpart = use.counterpartKey, let other,
            let found = other.occurrences(of: counterpart).first
        {
            c.add(
                Finding(
                    .error, .crossPlatform, platform: p, key: use.key,
                    message:
                        "\(p.displayName) key \(use.key) exists in no \(p.displayName) resources, but its \(other.platform.displayName) counterpart \(counterpart) does (\(found.entry.location)) and the mapping targets both platforms: \(impact)",
                    resource: nil), use: use)
            return
        }
        let elsewhere = catalog.occurrences(of: use.key)
        guard let first = elsewhere.first else {
            c.add(
                Finding(.error, .missingDefault, platform: p, key: use.key, message: "\(use.key) is in no \(p.displayName) resources; \(impact)"),
                use: use)
            return
        }
        let locales = elsewhere.map(\.locale).joined(separator: ", ")
        // Android: the key has a resource id (ids are per name, not per configuration), so FCM's
        // getIdentifier finds it, and Resources.getString throws NotFoundException where no
        // configuration matches; NotificationParams does not catch it (docs/localization.md).
        let message =
            p == .android
            ? "\(use.key) is not in values/ but only in the resources for \(locales): on a device in any other language, Android finds the resource's id but no value, and getString throws Resources.NotFoundException, which FCM does not catch, so the app crashes when the notification arrives in the background (Android Lint calls this ExtraTranslation); add it to values/"
            : "\(use.key) is not in the development language's table (\(catalog.defaultLocale)) but only for \(locales): devices using any other localization show the key itself, \"\(use.key)\""
        c.add(Finding(.error, .missingDefault, platform: p, key: use.key, message: message, resource: first.entry.location), use: use)
    }

    /// iOS: a String Catalog key added by hand with no source-language value. Unlike a key
    /// extracted from code (`"%@"`), it is not its own text, so devices in the source language,
    /// and in every language without a value of its own, show the raw key as the title or body:
    /// an error, as a key missing from the default table is.
    private static func reportManualKey(_ use: KeyUse, at: SourceLocation, _ catalog: ResourceCatalog, into c: inout Collector) {
        let having = catalog.occurrences(of: use.key).map(\.locale)
        let others = having.isEmpty ? "no language has one" : "only \(having.joined(separator: ", ")) \(having.count == 1 ? "has" : "have") one"
        c.add(
            Finding(
                .error, .missingDefault, platform: .ios, key: use.key,
                message:
                    "\(use.key) was added to the String Catalog by hand (extractionState \"manual\") and has no \(catalog.defaultLocale) value (\(others)): a manual key is a name, not text, so devices in \(catalog.defaultLocale) and in every language without a value show the raw key \"\(use.key)\" as the \(use.field.rawValue); write its \(catalog.defaultLocale) text",
                resource: at), use: use)
    }

    /// Reports plurals and arrays; false if the entry is not a string.
    private static func checkKind(_ entry: ResourceEntry, locale: String?, _ use: KeyUse, into c: inout Collector) -> Bool {
        switch entry.kind {
        case .string:
            return true
        case .stringArray:
            c.add(
                Finding(
                    .error, .stringArray, platform: use.platform, locale: locale, key: use.key,
                    message: "\(use.key) is a <string-array>; FCM looks loc keys up as strings, finds none, and shows the default text",
                    resource: entry.location), use: use)
        case .plurals, .stringsdictPlural, .xcstringsPlural:
            let why =
                use.platform == .android
                ? "FCM looks loc keys up as <string> resources, finds none, and shows the default text"
                : "loc args are strings, so iOS cannot pick a plural form from them"
            c.add(
                Finding(
                    .error, .plural, platform: use.platform, locale: locale, key: use.key,
                    message:
                        "\(use.key) is \(entry.kind.displayName), which a loc key cannot select: \(why); send a plain string with the count as an arg",
                    resource: entry.location), use: use)
        }
        return false
    }

    /// Checks a string's specifiers against what the mapping sends; returns its arg-taking
    /// specifiers (nil if it cannot be parsed).
    private static func checkString(
        _ entry: ResourceEntry, locale: String?, _ use: KeyUse, countArguments: Bool, alsoIn: [String] = [],
        into c: inout Collector
    ) -> [FormatSpecifier]? {
        let n = use.argumentCount
        let p = use.platform
        let inLocale = locale.map { " (\($0))" } ?? ""
        func add(_ severity: Severity, _ rule: Finding.Rule, _ message: String) {
            c.add(Finding(severity, rule, platform: p, locale: locale, key: use.key, message: message, resource: entry.location), use: use)
        }
        let segments: [FormatSegment]
        switch p {
        case .android:
            switch JavaFormat.parse(entry.value) {
            case .success(let s): segments = s
            case .failure(let e):
                if n > 0 {
                    add(
                        .error, .androidSpecifier,
                        "\(use.key)\(inLocale) is not a valid Java format string: formatting it with loc args throws \(e.name) (\(e.message)), which FCM does not catch: the app crashes when the notification arrives in the background"
                    )
                }
                return nil
            }
        case .ios:
            switch AppleFormat.parse(entry.value) {
            case .success(let s): segments = s
            case .failure(let f):
                if n > 0 { add(.error, .iosSpecifier, "\(use.key)\(inLocale): \(f.message)") }
                return nil
            }
        }
        let specs = segments.specifiers.filter { $0.argument != nil }
        if n > 0 {
            for spec in specs {
                let index = spec.argument ?? 1
                switch p {
                case .android where JavaFormat.acceptsString(spec):
                    if spec.flags.contains("#") {
                        add(
                            .error, .androidSpecifier,
                            "\(spec.text) in \(use.key)\(inLocale) throws FormatFlagsConversionMismatchException with a String arg, which FCM does not catch: the app crashes when the notification arrives in the background"
                        )
                    }
                case .android where "bBhH".contains(spec.conversion):
                    add(
                        .error, .androidSpecifier,
                        "\(spec.text) in \(use.key)\(inLocale) receives a string loc arg and prints \(spec.conversion.lowercased() == "b" ? "\"true\"" : "a hash code") instead of it; use %\(index)$s"
                    )
                case .android:
                    add(
                        .error, .androidSpecifier,
                        "\(spec.text) in \(use.key)\(inLocale) receives a string loc arg (FCM sends every arg as a String): Android throws IllegalFormatConversionException (\(spec.conversion) != java.lang.String), which FCM does not catch, so the app crashes when the notification arrives in the background; use %\(index)$s"
                    )
                case .ios where !AppleFormat.acceptsString(spec):
                    add(
                        .error, .iosSpecifier,
                        "\(spec.text) in \(use.key)\(inLocale) receives a string loc arg: undefined behaviour on iOS (garbage text or a crash); use %\(index)$@"
                    )
                case .ios:
                    if let width = AppleFormat.widthReadAsIndex(spec) {
                        misreadIndex(spec, width: width, in: use, inLocale, into: add)
                    }
                }
            }
            if p == .android, n > 1 || specs.count > 1, let loose = specs.first(where: { !$0.isPositional }) {
                add(
                    .error, .androidNonPositional,
                    "\(loose.text) in \(use.key)\(inLocale) has no argument index while \(max(n, specs.count)) args are in play: translations reorder words, so write %1$s, %2$s …"
                )
            }
        }
        guard countArguments else { return specs }
        if n == 0 {
            // No `*_loc_args`: the phone shows the string without formatting it. Count only
            // specifiers that look meant (`%1$s`, `%s`, `%@`), not a literal "100% f…".
            let meant = specs.filter(\.looksMeant)
            if let first = meant.first {
                let required = meant.compactMap(\.argument).max() ?? 1
                let listed = alsoIn.prefix(5).joined(separator: ", ") + (alsoIn.count > 5 ? ", …" : "")
                var also = ""
                if alsoIn.count == 1 {
                    also = "; so does the \(listed) translation"
                } else if !alsoIn.isEmpty {
                    also = "; so do \(alsoIn.count) translations (\(listed))"
                }
                add(
                    .error, .argumentCount,
                    "\(use.key)\(inLocale) needs \(required) arg\(required == 1 ? "" : "s") but the mapping sends none, so the phone does not format it and shows \(first.text) as is\(also)"
                )
            } else {
                checkUnformattedPercent(entry, locale: locale, use, into: &c)
            }
            return specs
        }
        let required = segments.requiredArguments
        if n < required {
            let impact =
                p == .android
                ? "Android throws MissingFormatArgumentException; FCM catches it and shows the plain \(use.field.rawValue) instead (\(use.field == .title ? "the app's name" : "no text"))"
                : "undefined behaviour on iOS"
            add(
                .error, .argumentCount, "\(use.key)\(inLocale) needs \(required) arg\(required == 1 ? "" : "s") but the mapping sends \(n): \(impact)"
            )
        } else if n > required {
            add(
                .warning, .argumentCount,
                "the mapping sends \(n) arg\(n == 1 ? "" : "s") but \(use.key)\(inLocale) uses \(required): the extra args are never shown")
        }
        return specs
    }

    /// iOS: `%2@` reads as "arg 2" but its 2 is a field width (``AppleFormat/widthReadAsIndex(_:)``),
    /// so the args are taken in order: an error where that shows another arg than the number says
    /// (names swap), a warning where the order happens to agree (a translation that reorders the
    /// words, written alike, will swap them).
    private static func misreadIndex(
        _ spec: FormatSpecifier, width: Int, in use: KeyUse, _ inLocale: String, into add: (Severity, Finding.Rule, String) -> Void
    ) {
        let taken = spec.argument ?? 1
        let why =
            "without a $, \(width) is a field width, not an argument number (IEEE printf, which String(format:) follows), so the args are taken in the order written"
        if taken != width {
            add(.error, .iosSpecifier, "\(spec.text) in \(use.key)\(inLocale) shows arg \(taken), not arg \(width): \(why); write %\(width)$@")
        } else {
            add(
                .warning, .iosSpecifier,
                "\(spec.text) in \(use.key)\(inLocale) shows arg \(taken) only because it comes \(ordinal(taken)): \(why), and a translation that reorders them shows the wrong one; write %\(width)$@"
            )
        }
    }

    private static func ordinal(_ n: Int) -> String {
        switch n {
        case 1: "first"
        case 2: "second"
        case 3: "third"
        default: "\(n)th"
        }
    }

    /// Android, no loc args: `getString(id)` does not format, so `%%` shows as two percent signs,
    /// in any locale (translation tools often write `%%`, such as `%%15` for Turkish "%15").
    private static func checkUnformattedPercent(_ entry: ResourceEntry, locale: String?, _ use: KeyUse, into c: inout Collector) {
        guard use.platform == .android, case .success(let segments) = JavaFormat.parse(entry.value),
            segments.specifiers.contains(where: { $0.conversion == "%" })
        else { return }
        let inLocale = locale.map { " (\($0))" } ?? ""
        c.add(
            Finding(
                .warning, .argumentCount, platform: .android, locale: locale, key: use.key,
                message:
                    "the mapping sends no loc args, so Android does not format \(use.key)\(inLocale) and shows %% as two percent signs; write a single %",
                resource: entry.location), use: use)
    }

    private static func compare(
        _ specs: [FormatSpecifier], _ defaultSpecs: [FormatSpecifier], _ entry: ResourceEntry, _ defaultEntry: ResourceEntry,
        locale: String, _ use: KeyUse, into c: inout Collector
    ) {
        let mine = Set(specs.map(\.signature))
        let theirs = Set(defaultSpecs.map(\.signature))
        guard mine != theirs else { return }
        let extra = specs.filter { !theirs.contains($0.signature) }.map(\.text)
        let dropped = defaultSpecs.filter { !mine.contains($0.signature) }.map(\.text)
        var parts: [String] = []
        if !extra.isEmpty { parts.append("uses \(extra.joined(separator: ", ")) which the default string does not") }
        if !dropped.isEmpty { parts.append("drops \(dropped.joined(separator: ", "))") }
        let message = "\(use.key) in \(locale) \(parts.joined(separator: " and ")) (default: \"\(defaultEntry.value)\" at \(defaultEntry.location))"
        c.add(
            Finding(
                extra.isEmpty ? .warning : .error, .translationMismatch, platform: use.platform, locale: locale, key: use.key,
                message: message, resource: entry.location), use: use)
    }

    // MARK: - Collecting

    /// Gathers findings, merging the same finding reached from several mappings.
    struct Collector {
        var findings: [Finding] = []
        private var index: [String: Int] = [:]

        mutating func add(_ finding: Finding, use: KeyUse?) {
            let id =
                "\(finding.rule)|\(finding.platform?.rawValue ?? "")|\(finding.locale ?? "")|\(finding.key ?? "")|\(finding.resource?.description ?? "")|\(finding.message)"
            let reference = use.map { Finding.Use(eventType: $0.eventType, field: $0.field, argumentCount: $0.argumentCount, location: $0.location) }
            if let i = index[id] {
                if let reference, !findings[i].uses.contains(reference) { findings[i].uses.append(reference) }
                return
            }
            var f = finding
            if let reference { f.uses = [reference] }
            index[id] = findings.count
            findings.append(f)
        }
    }
}
