import Localization
import Testing

@Suite("Resource catalogs and lookup")
struct CatalogTests {
    static func android() -> ResourceCatalog {
        ResourceCatalog.android(files: [
            (
                "res/values/strings.xml",
                bytes(
                    #"<resources><string name="hi">Hi %1$s</string><string name="bye">Bye</string><string name="alias">@string/hi</string></resources>"#
                )
            ),
            ("res/values-pt/strings.xml", bytes(#"<resources><string name="hi">Olá %1$s</string><string name="bye">Tchau</string></resources>"#)),
            ("res/values-pt-rBR/strings.xml", bytes(#"<resources><string name="hi">Oi %1$s</string></resources>"#)),
            ("res/values-es-rES/strings.xml", bytes(#"<resources><string name="hi">Hola %1$s</string></resources>"#)),
            ("res/values-night/strings.xml", bytes(#"<resources><string name="hi">ignored</string></resources>"#)),
        ])
    }

    @Test("Android resolves each key on its own: exact, parent, sibling region, then default")
    func androidResolution() {
        let c = Self.android()
        #expect(c.locales == ["en", "es-ES", "pt", "pt-BR"])
        #expect(c.resolve("hi", locale: "pt-BR").entry?.value == "Oi %1$s")
        let bye = c.resolve("bye", locale: "pt-BR")
        #expect(bye.entry?.value == "Tchau")
        #expect(bye.note == "from values-pt")
        #expect(c.resolve("hi", locale: "es-MX").entry?.value == "Hola %1$s")  // Android 7+: another region of the language
        let fr = c.resolve("hi", locale: "fr")
        #expect(fr.entry?.value == "Hi %1$s")
        #expect(fr.isFallback)
        #expect(fr.note == "no values-fr: default values/ used")
        #expect(c.resolve("hi", locale: "en").note == nil)
        #expect(c.resolve("alias", locale: "pt-BR").entry?.value == "Oi %1$s")
        #expect(c.resolve("nothing", locale: "pt").entry == nil)
    }

    @Test("a @string/ reference cycle ends instead of looping")
    func referenceCycle() {
        let c = ResourceCatalog.android(files: [
            ("values/strings.xml", bytes(#"<resources><string name="a">@string/b</string><string name="b">@string/a</string></resources>"#))
        ])
        let r = c.resolve("a", locale: "en")
        #expect(r.entry == nil)
        #expect(r.note == "via @string/b; @string/a refers back to itself")
    }

    @Test("iOS picks one localization and looks only there; Base.lproj stands in for the development language")
    func appleResolution() {
        let c = ResourceCatalog.apple(files: [
            ("Base.lproj/Localizable.strings", bytes(#""HI" = "Hi %1$@"; "BYE" = "Bye";"#)),
            ("fr.lproj/Localizable.strings", bytes(#""HI" = "Salut %1$@";"#)),
            (
                "fr.lproj/Localizable.stringsdict",
                bytes(
                    #"<plist><dict><key>N</key><dict><key>NSStringLocalizedFormatKey</key><string>%#@n@</string><key>n</key><dict><key>NSStringFormatSpecTypeKey</key><string>NSStringPluralRuleType</string><key>other</key><string>%d</string></dict></dict></dict></plist>"#
                )
            ),
            ("pt_BR.lproj/Localizable.strings", bytes(#""HI" = "Oi %1$@";"#)),
        ])
        #expect(c.defaultLocale == "en")
        #expect(c.locales == ["en", "fr", "pt-BR"])
        #expect(c.resolve("HI", locale: "fr-CA").entry?.value == "Salut %1$@")
        let bye = c.resolve("BYE", locale: "fr")
        #expect(bye.entry == nil)  // no per-key fallback: iOS shows the key
        #expect(bye.tableLocale == "fr")
        let de = c.resolve("BYE", locale: "de")
        #expect(de.entry?.value == "Bye")
        #expect(de.note == "app not localized for de: development language en used")
        #expect(c.resolve("N", locale: "fr").entry?.kind == .stringsdictPlural)
        #expect(c.resolve("HI", locale: "pt-BR").entry?.value == "Oi %1$@")
        let british = c.resolve("BYE", locale: "en-GB")
        #expect(british.entry?.value == "Bye")
        #expect(!british.isFallback)
        #expect(british.note == "en used")
    }

    @Test("a .stringsdict entry of any rule overrides its .lproj's .strings pair; a key twice in either kind of file is still twice")
    func stringsdictOverrides() {
        let device =
            #"<plist><dict><key>K</key><dict><key>NSStringDeviceSpecificRuleType</key><dict><key>iphone</key><string>On iPhone</string></dict></dict></dict></plist>"#
        let c = ResourceCatalog.apple(files: [
            ("en.lproj/Localizable.strings", bytes(#""K" = "Anywhere"; "S" = "One";"#)),
            ("en.lproj/Localizable.stringsdict", bytes(device)),
            ("more/en.lproj/Localizable.strings", bytes(#""S" = "Two";"#)),
            ("fr.lproj/Localizable.stringsdict", bytes(device)),
            ("more/fr.lproj/Localizable.stringsdict", bytes(device)),
        ])
        #expect(c.defaultTable.entries["K"]?.value == "On iPhone")
        #expect(
            c.problems.map(\.description) == [
                "more/fr.lproj/Localizable.stringsdict:1: error: K is defined twice for fr (also at fr.lproj/Localizable.stringsdict:1)",
                "more/en.lproj/Localizable.strings:1: error: S is defined twice for en (also at en.lproj/Localizable.strings:1)",
            ])
    }

    @Test("a String Catalog's sourceLanguage is the development language")
    func xcstringsCatalog() {
        let c = ResourceCatalog.loadApple(paths: ["\(fixtures)/catalog"])
        #expect(c.defaultLocale == "en")
        #expect(c.locales == ["en", "fr"])
        #expect(c.defaultTable.entries["GREETING_TITLE"]?.value == "Hi, %1$@!")
        #expect(c.tables["fr"]?.entries["GREETING_TITLE"]?.location.line == 51)
    }

    @Test("loading collects parse errors with file:line and keeps the other files")
    func loadingProblems() {
        let android = ResourceCatalog.loadAndroid(directories: ["\(fixtures)/broken/android/res", "\(fixtures)/nowhere"])
        #expect(
            android.problems.map(\.description) == [
                "\(fixtures)/nowhere:1: error: no such directory",
                "\(fixtures)/broken/android/res/values/strings.xml:4: error: invalid XML: & must start an entity such as &amp; (write &amp; for a literal &)",
                "\(fixtures)/broken/android/res/values-fr/strings.xml:5: error: invalid XML: </resources> does not match <string> opened at line 4",
            ])
        let ios = ResourceCatalog.loadApple(paths: ["\(fixtures)/broken/ios"])
        #expect(
            ios.problems.map(\.description) == [
                "\(fixtures)/broken/ios/en.lproj/Localizable.strings:3: error: expected ; after the value of \"BAD\"",
                "\(fixtures)/broken/ios/fr.lproj/Localizable.stringsdict:6: error: invalid property list: <key>NSStringLocalizedFormatKey</key> has no value",
            ])
    }

    @Test("values-night and other non-locale qualifiers are skipped; b+ tags are read")
    func qualifiedDirectories() {
        let c = ResourceCatalog.loadAndroid(directories: ["\(fixtures)/clean/android/res"])
        #expect(c.locales == ["en", "fr", "sr-Latn"])
        #expect(c.problems.isEmpty)
    }
}
