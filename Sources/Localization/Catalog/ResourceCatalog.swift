/// The strings of one language: key → entry, and where they came from.
public struct LocaleTable: Sendable {
    /// A BCP 47 tag: `fr`, `pt-BR`, `sr-Latn`; for the default table, the default locale.
    public var locale: String
    public var entries: [String: ResourceEntry] = [:]
    /// The directories or files it was read from, for messages (`res/values-fr`, `fr.lproj`).
    public var sources: [String] = []

    public init(locale: String) {
        self.locale = locale
    }
}

/// All string resources of one platform, per locale, as the phone would look them up.
///
/// Android's default resources (`values/`) and iOS's development language (`en.lproj`,
/// `Base.lproj`, a catalog's `sourceLanguage`) form the ``defaultTable``; every other locale
/// has its own table.
public struct ResourceCatalog: Sendable {
    public var platform: DevicePlatform
    /// The language of the default table (`en` unless told otherwise).
    public var defaultLocale: String
    public var defaultTable: LocaleTable
    /// The other locales' tables by tag.
    public var tables: [String: LocaleTable] = [:]
    /// Parse errors and other problems in the files, with file:line.
    public var problems: [ResourceProblem] = []
    /// iOS: String Catalog keys added by hand (`extractionState: "manual"`) that have no value
    /// in the source language, where each is. Such a key is a name, not text: devices show the
    /// raw key wherever no table has a value for it (``XCStringsParser``).
    public var manualKeysWithoutSource: [String: SourceLocation] = [:]

    public init(platform: DevicePlatform, defaultLocale: String) {
        self.platform = platform
        self.defaultLocale = defaultLocale
        self.defaultTable = LocaleTable(locale: defaultLocale)
    }

    /// The default locale, then the others sorted.
    public var locales: [String] { [defaultLocale] + tables.keys.filter { $0 != defaultLocale }.sorted() }

    /// Whether any string was found at all.
    public var isEmpty: Bool { defaultTable.entries.isEmpty && tables.values.allSatisfy(\.entries.isEmpty) }

    /// The table for a locale (the default table for the default locale).
    public func table(_ locale: String) -> LocaleTable? {
        locale == defaultLocale ? defaultTable : tables[locale]
    }

    /// Whether the key exists in any table.
    public func containsAnywhere(_ key: String) -> Bool {
        defaultTable.entries[key] != nil || tables.values.contains { $0.entries[key] != nil }
    }

    /// Where a key exists, default first: `(locale, entry)`.
    public func occurrences(of key: String) -> [(locale: String, entry: ResourceEntry)] {
        locales.compactMap { l in table(l)?.entries[key].map { (l, $0) } }
    }

    // MARK: - Translation, as lint judges it

    /// Whether a device in a locale other than the default reads a key in its own language.
    public enum Translation: Sendable, Equatable {
        /// From the locale's own resources (Android: or a parent locale's): the entry shown.
        case translated(ResourceEntry)
        /// From the default resources, as meant: the string shown is `translatable="false"`
        /// (or `shouldTranslate: false`).
        case notExpected
        /// From the default resources although the string shown is translatable; `via` lists the
        /// `@string/` references followed to it.
        case missing(via: [String])
    }

    /// How `key` reads in `locale` (not the default locale).
    ///
    /// Android resolves every resource, `@string/` references included, for the device's
    /// configuration (AssetManager2::ResolveReference): `app_name` → `@string/app_name_prod` in
    /// `values/` shows `values-fr/app_name_prod` on a French device. So each hop is looked up
    /// in the locale (and its parents) first, then in `values/`, and what decides is the string
    /// finally shown. iOS looks the key up in the one table it picked.
    public func translation(of key: String, in locale: String) -> Translation {
        switch platform {
        case .ios:
            if let entry = tables[locale]?.entries[key] { return .translated(entry) }
            return defaultTable.entries[key]?.translatable == false ? .notExpected : .missing(via: [])
        case .android:
            let parents = LocaleTag.chain(locale)
            var name = key
            var seen: Set<String> = [key]
            var via: [String] = []
            while true {
                let own = parents.lazy.compactMap { self.tables[$0]?.entries[name] }.first
                guard let entry = own ?? defaultTable.entries[name] else { return .missing(via: via) }
                if let target = entry.reference, seen.insert(target).inserted {
                    via.append(target)
                    name = target
                    continue
                }
                if own != nil { return .translated(entry) }
                return entry.translatable ? .missing(via: via) : .notExpected
            }
        }
    }

    // MARK: - Lookup as the phone does it

    /// What the phone shows for a key in a locale.
    public struct Resolution: Sendable {
        /// The entry used, if any (an Android `@string/` reference already followed).
        public var entry: ResourceEntry?
        /// The locale of the table the entry came from, or that was searched.
        public var tableLocale: String
        /// Whether the text comes from the default table although another locale was asked for.
        public var isFallback: Bool
        /// What happened, when it is not a plain hit: "values-de has no welcome_title; default used".
        public var note: String?
    }

    /// Tables to try for a locale, best first, default excluded: the exact tag, its parents
    /// (`sr-Latn-RS` → `sr-Latn` → `sr`), then (Android 7+) other regions of the language.
    public func candidates(for locale: String) -> [String] {
        let tag = LocaleTag.normalize(locale)
        var result = LocaleTag.chain(tag).filter { tables[$0] != nil }
        if platform == .android, let language = tag.split(separator: "-").first {
            for t in tables.keys.sorted() where t.split(separator: "-").first == language && !result.contains(t) {
                result.append(t)
            }
        }
        return result
    }

    /// Looks a key up for a device in `locale` (a tag such as `fr` or `pt-BR`).
    ///
    /// Android resolves each resource on its own: the best locale table that has the key, else
    /// the default `values/`; `@string/` references are followed. iOS picks one localization
    /// for the app (the best supported, else the development language) and looks only there:
    /// a key missing from it shows as the key itself.
    public func resolve(_ key: String, locale: String) -> Resolution {
        var resolution = lookUp(key, locale: locale)
        var seen: Set<String> = [key]
        while let target = resolution.entry?.reference {
            guard seen.insert(target).inserted else {
                resolution.entry = nil
                resolution.note = [resolution.note, "@string/\(target) refers back to itself"].compactMap { $0 }.joined(separator: "; ")
                break
            }
            let next = lookUp(target, locale: locale)
            resolution.entry = next.entry
            resolution.note = [resolution.note, "via @string/\(target)"].compactMap { $0 }.joined(separator: "; ")
        }
        return resolution
    }

    /// One lookup, references not followed.
    private func lookUp(_ key: String, locale: String) -> Resolution {
        let tag = LocaleTag.normalize(locale)
        let isDefault = tag == defaultLocale
        switch platform {
        case .android:
            let chain = candidates(for: locale)
            for t in chain {
                if let entry = tables[t]?.entries[key] {
                    return Resolution(
                        entry: entry, tableLocale: t, isFallback: false, note: t == tag ? nil : "from values-\(AndroidDirectory.qualifier(t))")
                }
            }
            guard let entry = defaultTable.entries[key] else {
                return Resolution(entry: nil, tableLocale: defaultLocale, isFallback: !isDefault, note: nil)
            }
            let note: String? =
                isDefault
                ? nil
                : chain.isEmpty
                    ? "no values-\(AndroidDirectory.qualifier(tag)): default values/ used"
                    : "values-\(AndroidDirectory.qualifier(chain[0])) has no \(key): default values/ used"
            return Resolution(entry: entry, tableLocale: defaultLocale, isFallback: !isDefault, note: note)
        case .ios:
            let chain = isDefault ? [] : candidates(for: locale)
            if let t = chain.first, let table = tables[t] {
                return Resolution(entry: table.entries[key], tableLocale: t, isFallback: false, note: t == tag ? nil : "\(t).lproj used")
            }
            // en-GB on an app developed in en: the more generic dialect, not a fallback.
            let sameLanguage = tag.split(separator: "-").first == defaultLocale.split(separator: "-").first
            let note: String? =
                isDefault
                ? nil
                : sameLanguage
                    ? "\(defaultLocale) used"
                    : "app not localized for \(tag): development language \(defaultLocale) used"
            return Resolution(entry: defaultTable.entries[key], tableLocale: defaultLocale, isFallback: !isDefault && !sameLanguage, note: note)
        }
    }
}

/// Locale tag spelling shared by both platforms.
public enum LocaleTag {
    static let legacyAppleNames = [
        "English": "en", "French": "fr", "German": "de", "Spanish": "es", "Italian": "it",
        "Japanese": "ja", "Dutch": "nl",
    ]

    /// The tag, then its parents: `sr-Latn-RS`, `sr-Latn`, `sr`.
    static func chain(_ tag: String) -> [String] {
        var parts = tag.split(separator: "-").map(String.init)
        var chain: [String] = []
        while !parts.isEmpty {
            chain.append(parts.joined(separator: "-"))
            parts.removeLast()
        }
        return chain
    }

    /// `pt_BR`, `PT-br`, `English` → `pt-BR`, `pt-BR`, `en`; script subtags title-cased.
    public static func normalize(_ tag: String) -> String {
        if let legacy = legacyAppleNames[tag] { return legacy }
        let subtags = tag.split(whereSeparator: { $0 == "-" || $0 == "_" }).map(String.init)
        return ResourceQualifier.bcp47(subtags) ?? tag
    }
}

/// Android directory spelling of a locale tag.
public enum AndroidDirectory {
    /// `fr` → `fr`, `pt-BR` → `pt-rBR`, `sr-Latn` → `b+sr+Latn`.
    public static func qualifier(_ tag: String) -> String {
        let parts = tag.split(separator: "-").map(String.init)
        if parts.count == 1 { return tag }
        if parts.count == 2, parts[1].count == 2 { return "\(parts[0])-r\(parts[1])" }
        return "b+" + parts.joined(separator: "+")
    }
}
