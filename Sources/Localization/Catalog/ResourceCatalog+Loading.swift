import Foundation

extension ResourceCatalog {
    // MARK: - Android

    /// Reads Android resources: each directory is a `res/` directory (its `values*/`
    /// subdirectories are read), a module directory with `src/main/res`, or a `values*`
    /// directory itself. Every `*.xml` in a `values*` directory is parsed; directories with
    /// qualifiers other than a locale (`values-night`, `values-v21`) are skipped. Problems
    /// (unreadable files, parse errors) are collected, never thrown.
    public static func loadAndroid(directories: [String], defaultLocale: String = "en") -> ResourceCatalog {
        var files: [(path: String, bytes: [UInt8])] = []
        var problems: [ResourceProblem] = []
        for directory in directories {
            guard FileSystem.isDirectory(directory) else {
                problems.append(ResourceProblem(.error, SourceLocation(file: directory, line: 1), "no such directory"))
                continue
            }
            var valuesDirectories: [String] = []
            let name = (directory as NSString).lastPathComponent
            if ResourceQualifier.parse(directoryName: name) != nil {
                valuesDirectories = [directory]
            } else {
                var res = directory
                if FileSystem.subdirectories(of: res).allSatisfy({ ResourceQualifier.parse(directoryName: $0) == nil }),
                    FileSystem.isDirectory(res + "/src/main/res")
                {
                    res += "/src/main/res"
                }
                valuesDirectories = FileSystem.subdirectories(of: res)
                    .filter { ResourceQualifier.parse(directoryName: $0) != nil }
                    .map { (res as NSString).appendingPathComponent($0) }
            }
            if valuesDirectories.isEmpty {
                problems.append(ResourceProblem(.error, SourceLocation(file: directory, line: 1), "no values*/ directories: give a res/ directory"))
            }
            for values in valuesDirectories {
                for file in FileSystem.files(in: values) where file.hasSuffix(".xml") {
                    read((values as NSString).appendingPathComponent(file), into: &files, problems: &problems)
                }
            }
        }
        var catalog = android(files: files, defaultLocale: defaultLocale)
        catalog.problems.insert(contentsOf: problems, at: 0)
        return catalog
    }

    /// Builds an Android catalog from `values*/…xml` files given as (path, contents).
    public static func android(files: [(path: String, bytes: [UInt8])], defaultLocale: String = "en") -> ResourceCatalog {
        var catalog = ResourceCatalog(platform: .android, defaultLocale: defaultLocale)
        for (path, bytes) in files {
            let directory = (path as NSString).deletingLastPathComponent
            guard let qualifier = ResourceQualifier.parse(directoryName: (directory as NSString).lastPathComponent),
                qualifier.others.isEmpty
            else { continue }
            let parsed: ParsedResources
            do {
                parsed = try AndroidStringsParser.parse(bytes, file: path)
            } catch {
                catalog.problems.append(error.in(qualifier.locale))
                continue
            }
            catalog.problems.append(contentsOf: parsed.problems.map { $0.in(qualifier.locale) })
            let locale = qualifier.locale ?? defaultLocale
            catalog.merge(parsed.entries, into: qualifier.locale == nil ? nil : locale, source: directory)
        }
        return catalog
    }

    // MARK: - Apple

    /// Reads iOS resources: directories are searched (recursively) for
    /// `*.lproj/Localizable.strings`, `*.lproj/Localizable.stringsdict` and
    /// `Localizable.xcstrings`; files are taken as given (a `.strings` or `.stringsdict` must sit
    /// in an `xx.lproj` directory; a `.xcstrings` may have any name).
    /// - Parameter developmentLanguage: the default language; nil takes a String Catalog's
    ///   `sourceLanguage`, else `en`.
    public static func loadApple(paths: [String], developmentLanguage: String? = nil) -> ResourceCatalog {
        var files: [(path: String, bytes: [UInt8])] = []
        var problems: [ResourceProblem] = []
        for path in paths {
            var list: [String] = []
            if FileSystem.isDirectory(path) {
                list = FileSystem.recursiveFiles(in: path).filter { file in
                    let name = (file as NSString).lastPathComponent
                    let parent = ((file as NSString).deletingLastPathComponent as NSString).lastPathComponent
                    return name == "Localizable.xcstrings"
                        || (parent.hasSuffix(".lproj") && (name == "Localizable.strings" || name == "Localizable.stringsdict"))
                }.map { (path as NSString).appendingPathComponent($0) }
                if list.isEmpty {
                    problems.append(
                        ResourceProblem(
                            .error, SourceLocation(file: path, line: 1), "no *.lproj/Localizable.strings(dict) or Localizable.xcstrings below it"))
                }
            } else if FileSystem.exists(path) {
                list = [path]
            } else {
                problems.append(ResourceProblem(.error, SourceLocation(file: path, line: 1), "no such file or directory"))
            }
            for file in list { read(file, into: &files, problems: &problems) }
        }
        var catalog = apple(files: files, developmentLanguage: developmentLanguage)
        catalog.problems.insert(contentsOf: problems, at: 0)
        return catalog
    }

    /// Builds an iOS catalog from `.strings`, `.stringsdict` and `.xcstrings` files given as
    /// (path, contents).
    public static func apple(files: [(path: String, bytes: [UInt8])], developmentLanguage: String? = nil) -> ResourceCatalog {
        var problems: [ResourceProblem] = []
        // lproj name (normalized, or "Base") → entries from .strings, then .stringsdict on top.
        var lproj: [String: (strings: [ResourceEntry], dict: [ResourceEntry], source: String)] = [:]
        var catalogs: [XCStringsParser.Catalog] = []
        for (path, bytes) in files {
            let ext = (path as NSString).pathExtension
            if ext == "xcstrings" {
                do {
                    let parsed = try XCStringsParser.parse(bytes, file: path)
                    problems.append(contentsOf: parsed.problems)
                    catalogs.append(parsed)
                } catch {
                    problems.append(error)
                }
                continue
            }
            let directory = (path as NSString).deletingLastPathComponent
            let folder = (directory as NSString).lastPathComponent
            guard folder.hasSuffix(".lproj") else {
                problems.append(
                    ResourceProblem(.error, SourceLocation(file: path, line: 1), "not in an xx.lproj directory: its language is unknown"))
                continue
            }
            let name = String(folder.dropLast(".lproj".count))
            let language = name == "Base" ? "Base" : LocaleTag.normalize(name)
            var slot = lproj[language] ?? ([], [], directory)
            do {
                switch ext {
                case "strings":
                    let parsed = try StringsFileParser.parse(bytes, file: path)
                    problems.append(contentsOf: parsed.problems.map { $0.in(language) })
                    slot.strings += parsed.entries
                case "stringsdict":
                    let parsed = try StringsDictParser.parse(bytes, file: path)
                    problems.append(contentsOf: parsed.problems.map { $0.in(language) })
                    slot.dict += parsed.entries
                default:
                    problems.append(ResourceProblem(.error, SourceLocation(file: path, line: 1), "not a .strings, .stringsdict or .xcstrings file"))
                    continue
                }
                lproj[language] = slot
            } catch {
                problems.append(error.in(language))
            }
        }
        let development = developmentLanguage.map(LocaleTag.normalize) ?? catalogs.first?.sourceLanguage ?? "en"
        var catalog = ResourceCatalog(platform: .ios, defaultLocale: development)
        // The development language's files are the default resources: no locale, as in findings.
        catalog.problems = problems.map { $0.locale == development || $0.locale == "Base" ? $0.in(nil) : $0 }
        // The development language's own .lproj wins over Base.lproj, as the bundle picks one.
        let developmentSlot = lproj[development] ?? lproj["Base"]
        for (language, slot) in lproj.sorted(by: { $0.key < $1.key }) where language != "Base" && language != development {
            catalog.merge(slot.strings, into: language, source: slot.source)
            catalog.merge(slot.dict, into: language, source: slot.source, overriding: Set(slot.strings.map(\.key)))
        }
        if let slot = developmentSlot {
            catalog.merge(slot.strings, into: nil, source: slot.source)
            catalog.merge(slot.dict, into: nil, source: slot.source, overriding: Set(slot.strings.map(\.key)))
        }
        for parsed in catalogs {
            catalog.manualKeysWithoutSource.merge(parsed.manualKeysWithoutSource) { first, _ in first }
            for (language, entries) in parsed.entries.sorted(by: { $0.key < $1.key }) {
                let file = entries.first?.location.file ?? ""
                catalog.merge(entries, into: LocaleTag.normalize(language) == development ? nil : LocaleTag.normalize(language), source: file)
            }
        }
        return catalog
    }

    /// Adds a file's contents to `files`, or a problem if it cannot be read.
    private static func read(_ path: String, into files: inout [(path: String, bytes: [UInt8])], problems: inout [ResourceProblem]) {
        if let bytes = FileSystem.read(path) {
            files.append((path, bytes))
        } else {
            problems.append(ResourceProblem(.error, SourceLocation(file: path, line: 1), "cannot read"))
        }
    }

    /// Adds entries to a table (nil: the default). A key defined twice for one locale is a
    /// problem, except for the keys in `overriding`: a `.stringsdict` entry, whatever its rule
    /// (plural, device, width), overrides the `.strings` one of its `.lproj`, as on iOS. Xcode
    /// compiles a String Catalog's device variations to both: a `.strings` pair and a
    /// `NSStringDeviceSpecificRuleType` rule for the same key.
    mutating func merge(_ entries: [ResourceEntry], into locale: String?, source: String, overriding: Set<String> = []) {
        var table = locale.flatMap { tables[$0] } ?? (locale == nil ? defaultTable : LocaleTable(locale: locale ?? defaultLocale))
        if !table.sources.contains(source) { table.sources.append(source) }
        var added: Set<String> = []
        for entry in entries {
            defer { added.insert(entry.key) }
            if let existing = table.entries[entry.key] {
                // Once: a key twice in the overriding files is still twice.
                if !overriding.contains(entry.key) || added.contains(entry.key) {
                    problems.append(
                        ResourceProblem(
                            .error, entry.location, "\(entry.key) is defined twice for \(table.locale) (also at \(existing.location))", key: entry.key
                        )
                        .in(locale))
                    continue
                }
            }
            table.entries[entry.key] = entry
        }
        if let locale { tables[locale] = table } else { defaultTable = table }
    }
}

/// The few file-system reads the loaders need.
enum FileSystem {
    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// Names of the subdirectories, sorted.
    static func subdirectories(of path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
            .filter { isDirectory((path as NSString).appendingPathComponent($0)) }
            .sorted()
    }

    /// Names of the regular files, sorted.
    static func files(in path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
            .filter { !isDirectory((path as NSString).appendingPathComponent($0)) }
            .sorted()
    }

    /// Paths of all files below a directory, relative to it, sorted.
    static func recursiveFiles(in path: String) -> [String] {
        var result: [String] = []
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return [] }
        while let relative = enumerator.nextObject() as? String {
            if !isDirectory((path as NSString).appendingPathComponent(relative)) { result.append(relative) }
        }
        return result.sorted()
    }

    static func read(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { Array($0) }
    }
}
