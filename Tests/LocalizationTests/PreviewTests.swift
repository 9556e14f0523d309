import Foundation
import Localization
import Mapping
import MappingLocalization
import Testing

@Suite("preview: what each device shows")
struct PreviewTests {
    /// Renders an example event with the example mappings and resources.
    static func rows(_ event: String, locales: [String]) throws -> [PreviewRow] {
        let set = try mappingSet("\(repositoryRoot)/examples/mappings")
        let json = try String(contentsOfFile: "\(repositoryRoot)/examples/events/\(event)", encoding: .utf8)
        let rendered = try set.render(EventRecord(value: Array(json.utf8))).get()
        let pushes = LocKeyUses.pushes(try #require(rendered.messages.first).json)
        return Previewer.preview(pushes, locales: locales, catalogs: exampleCatalogs())
    }

    static func text(_ rows: [PreviewRow], _ locale: String, _ platform: DevicePlatform, _ field: KeyUse.Field = .body) -> PreviewRow.Outcome? {
        rows.first { $0.locale == locale && $0.platform == platform && $0.field == field }?.outcome
    }

    @Test("welcome title in en, fr, de, ar and tr on both platforms")
    func welcome() throws {
        let rows = try Self.rows("welcome.json", locales: ["en", "fr", "de", "ar", "tr"])
        let expected = [
            "en": "Welcome, Alice!", "fr": "Bienvenue, Alice !", "de": "Willkommen, Alice!",
            "ar": "مرحبًا بك يا Alice!", "tr": "Hoş geldin, Alice!",
        ]
        for (locale, text) in expected {
            for p in DevicePlatform.allCases {
                #expect(Self.text(rows, locale, p, .title) == .text(text), "\(locale) \(p)")
            }
        }
        #expect(rows.count == 10)
        #expect(rows.allSatisfy { $0.note == nil })
    }

    @Test("Arabic stays intact: same scalars, in logical order, bidi marks kept")
    func rightToLeft() throws {
        let rows = try Self.rows("stock.json", locales: ["ar"])
        let expected = "ارتفع سهم FooCorp بمقدار 11.80 نقطة ليغلق عند 835.67، بزيادة 1.43% خلال اليوم."
        #expect(Self.text(rows, "ar", .android) == .text(expected))
        #expect(Self.text(rows, "ar", .ios) == .text(expected))
        let isolated = ResourceCatalog.android(files: [
            ("values-ar/strings.xml", bytes("<resources><string name=\"t\">\u{200F}مرحبًا \u{2068}%1$s\u{2069}!</string></resources>")),
            ("values/strings.xml", bytes(#"<resources><string name="t">Hi %1$s!</string></resources>"#)),
        ])
        let row = Previewer.render(.init(key: "t", args: ["Alice"]), field: .title, locale: "ar", catalog: isolated)
        #expect(row.outcome == .text("\u{200F}مرحبًا \u{2068}Alice\u{2069}!"))
        #expect(Previewer.table([row]).contains("\u{200F}مرحبًا \u{2068}Alice\u{2069}!"))
    }

    @Test("the docs' %1$d crashes on Android in every locale; iOS shows the text")
    func docsCrash() throws {
        let rows = try Self.rows("new-message.json", locales: ["en", "fr", "de", "ar", "tr"])
        for locale in ["en", "fr", "de", "ar", "tr"] {
            #expect(
                Self.text(rows, locale, .android)
                    == .failure("Android: IllegalFormatConversionException (d != java.lang.String) — app crashes in background"))
        }
        #expect(Self.text(rows, "en", .ios) == .text("3 new messages from Bob"))
        #expect(Self.text(rows, "de", .ios) == .text("3 neue Nachrichten von Bob"))
        #expect(Self.text(rows, "tr", .ios) == .text("Bob size 3 yeni mesaj gönderdi"))  // reordered by %2$@ %1$@
        #expect(Self.text(rows, "ar", .ios) == .text("3 رسائل جديدة من Bob"))
    }

    @Test("the stock example: four args and %% in every language")
    func stock() throws {
        let rows = try Self.rows("stock.json", locales: ["en", "fr", "tr"])
        #expect(Self.text(rows, "en", .android) == .text("FooCorp gained 11.80 points to close at 835.67, up 1.43% on the day."))
        #expect(Self.text(rows, "fr", .ios) == .text("FooCorp a gagné 11.80 points et clôture à 835.67, en hausse de 1.43 % sur la journée."))
        #expect(Self.text(rows, "tr", .android) == .text("FooCorp 11.80 puan kazanarak günü 835.67 seviyesinden, %1.43 artışla kapattı."))
    }

    @Test("a locale the app lacks falls back to the default and says so")
    func fallback() throws {
        let rows = try Self.rows("welcome.json", locales: ["pt-BR"])
        let android = try #require(rows.first { $0.platform == .android })
        #expect(android.outcome == .text("Welcome, Alice!"))
        #expect(android.note == "no values-pt-rBR: default values/ used")
        let ios = try #require(rows.first { $0.platform == .ios })
        #expect(ios.note == "app not localized for pt-BR: development language en used")
    }

    @Test("failures instead of invented text")
    func failures() {
        let android = ResourceCatalog.android(files: [
            (
                "values/strings.xml",
                bytes(
                    #"<resources><string name="two">%1$s and %2$s</string><plurals name="p"><item quantity="other">%d</item></plurals></resources>"#)
            )
        ])
        let missingArg = Previewer.render(.init(key: "two", args: ["a"]), field: .title, locale: "en", catalog: android)
        #expect(
            missingArg.outcome
                == .failure(
                    "Android: MissingFormatArgumentException (Format specifier '%2$s'), caught by FCM: shows the plain title (not sent: the app's name)"
                ))
        let plural = Previewer.render(.init(key: "p", args: ["3"]), field: .body, locale: "en", catalog: android)
        #expect(plural.outcome == .failure("p is a <plurals> resource, not a <string>: FCM shows the plain body (not sent: no text)"))
        let noArgs = Previewer.render(.init(key: "two", args: nil), field: .body, locale: "en", catalog: android)
        #expect(noArgs.outcome == .text("%1$s and %2$s"))  // getString(id): not formatted

        let ios = ResourceCatalog.apple(files: [
            ("en.lproj/Localizable.strings", bytes(#""N" = "%ld new"; "A" = "Hi";"#)),
            ("fr.lproj/Localizable.strings", bytes(#""A" = "Salut";"#)),
        ])
        let undefined = Previewer.render(.init(key: "N", args: ["3"]), field: .body, locale: "en", catalog: ios)
        #expect(undefined.outcome == .failure("iOS: %ld given a string loc arg: undefined behaviour (use %@ or %n$@)"))
        let missing = Previewer.render(.init(key: "N", args: ["3"]), field: .body, locale: "fr", catalog: ios)
        #expect(missing.outcome == .text("N"))
        #expect(missing.note == "N not found in fr: iOS shows the key")
    }

    @Test("the table: one row per locale, platform and field; notes in brackets")
    func table() throws {
        let rows = try Self.rows("welcome.json", locales: ["fr", "pt-BR"])
        let table = Previewer.table(rows)
        #expect(
            table == """
                locale | platform | field | key           | args      | final text
                -------|----------|-------|---------------|-----------|-----------
                fr     | android  | title | welcome_title | ["Alice"] | Bienvenue, Alice !
                fr     | ios      | title | WELCOME_TITLE | ["Alice"] | Bienvenue, Alice !
                pt-BR  | android  | title | welcome_title | ["Alice"] | Welcome, Alice! [no values-pt-rBR: default values/ used]
                pt-BR  | ios      | title | WELCOME_TITLE | ["Alice"] | Welcome, Alice! [app not localized for pt-BR: development language en used]

                """)
    }
}
