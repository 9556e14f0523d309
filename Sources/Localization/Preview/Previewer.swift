/// Renders what each device shows for a push, from the real resource files: Java `Formatter`
/// semantics on Android, `String(format:)` with `%@` on iOS, and the failure instead of
/// invented text wherever the device would fail.
public enum Previewer {
    /// One row per locale, platform (with a catalog) and field, in that order.
    public static func preview(_ pushes: [LocalizedPush], locales: [String], catalogs: [ResourceCatalog]) -> [PreviewRow] {
        var rows: [PreviewRow] = []
        for locale in locales.map(LocaleTag.normalize) {
            for push in pushes.sorted(by: { $0.platform < $1.platform }) {
                guard let catalog = catalogs.first(where: { $0.platform == push.platform }) else { continue }
                for (field, text) in [(KeyUse.Field.title, push.title), (.subtitle, push.subtitle), (.body, push.body)] {
                    guard let text else { continue }
                    rows.append(render(text, field: field, locale: locale, catalog: catalog))
                }
            }
        }
        return rows
    }

    /// What a device in `locale` shows for one loc key and its args, or a plain text.
    public static func render(_ text: LocalizedPush.Text, field: KeyUse.Field, locale: String, catalog: ResourceCatalog) -> PreviewRow {
        guard let key = text.key else {
            return PreviewRow(locale: locale, platform: catalog.platform, field: field, key: "(text)", args: nil, outcome: .text(text.text ?? ""))
        }
        if catalog.platform == .android, let plain = text.text {
            // Android's SDK shows a plain text whenever one is sent and never looks the key up
            // (firebase-android-sdk#3938, NotificationParams.getPossiblyLocalizedString).
            return PreviewRow(
                locale: locale, platform: .android, field: field, key: key, args: text.args, outcome: .text(plain),
                note: "the text sent beside the key wins on Android: the key is never looked up")
        }
        var row = render(key: key, args: text.args, field: field, locale: locale, catalog: catalog)
        if catalog.platform == .ios, let fallback = text.text, row.key == row.outcomeText, row.note?.contains("iOS shows the key") == true {
            // Observed, not documented by Apple: iOS shows the text sent beside a key the app lacks (jchambers/pushy#799).
            row.outcome = .text(fallback)
            row.note = "\(key) not found: iOS shows the fallback text"
        }
        return row
    }

    private static func render(key: String, args: [String]?, field: KeyUse.Field, locale: String, catalog: ResourceCatalog) -> PreviewRow {
        let text = (key: key, args: args)
        let resolution = catalog.resolve(text.key, locale: locale)
        var row = PreviewRow(
            locale: locale, platform: catalog.platform, field: field, key: text.key, args: text.args,
            outcome: .text(""), note: resolution.note)
        let plain = field == .title ? "the plain title (not sent: the app's name)" : "the plain \(field.rawValue) (not sent: no text)"
        switch catalog.platform {
        case .android:
            guard let entry = resolution.entry, entry.kind == .string else {
                let what = resolution.entry.map { "\(text.key) is \($0.kind.displayName), not a <string>" } ?? "no string resource \(text.key)"
                row.outcome = .failure("\(what): FCM shows \(plain)")
                return row
            }
            guard let args = text.args else {
                row.outcome = .text(entry.value)  // getString(id) without args: not formatted
                return row
            }
            switch JavaFormat.format(entry.value, args) {
            case .success(let s):
                row.outcome = .text(s)
            case .failure(let e) where e.isCaughtByFCM:
                row.outcome = .failure("Android: \(e.name) (\(e.message)), caught by FCM: shows \(plain)")
            case .failure(let e):
                row.outcome = .failure("Android: \(e.name) (\(e.message)) — app crashes in background")
            }
        case .ios:
            guard let entry = resolution.entry else {
                row.outcome = .text(text.key)
                row.note = [resolution.note, "\(text.key) not found in \(resolution.tableLocale): iOS shows the key"].compactMap { $0 }.joined(
                    separator: "; ")
                return row
            }
            guard entry.kind == .string else {
                row.outcome = .failure(
                    "iOS: \(text.key) is \(entry.kind.displayName); a plural form cannot be chosen from string loc args (undefined)")
                return row
            }
            guard let args = text.args else {
                row.outcome = .text(entry.value)
                return row
            }
            switch AppleFormat.format(entry.value, args) {
            case .success(let s):
                row.outcome = .text(s)
                // `%2@` looks like arg 2 but takes the next one: say why the names moved.
                let misread = (try? AppleFormat.parse(entry.value).get().specifiers) ?? []
                for spec in misread {
                    guard let width = AppleFormat.widthReadAsIndex(spec), let taken = spec.argument, taken != width else { continue }
                    let why = "\(spec.text) shows arg \(taken), not \(width): without a $ the number is a field width"
                    row.note = [row.note, why].compactMap { $0 }.joined(separator: "; ")
                }
            case .failure(let f): row.outcome = .failure("iOS: \(f.message)")
            }
        }
        return row
    }

    /// A table like the one in FCM's localization docs:
    /// `locale | platform | field | key | args | final text`. Text is kept byte for byte
    /// (right-to-left scripts and bidi marks included); only line breaks are shown as `\n` so
    /// that each row stays on one line. Failures start with ✗; notes (fallbacks) follow in brackets.
    public static func table(_ rows: [PreviewRow]) -> String {
        let header = ["locale", "platform", "field", "key", "args", "final text"]
        let cells: [[String]] = rows.map { row in
            var final: String
            switch row.outcome {
            case .text(let s): final = s.replacingNewlines
            case .failure(let why): final = "✗ " + why
            }
            if let note = row.note { final += " [" + note + "]" }
            let args = row.args.map { "[" + $0.map { "\"\($0)\"" }.joined(separator: ", ") + "]" } ?? "(none)"
            return [row.locale, row.platform.rawValue, row.field.rawValue, row.key, args.replacingNewlines, final]
        }
        var widths = header.map(\.count)
        for line in cells {
            for (i, cell) in line.enumerated() where i < header.count - 1 { widths[i] = max(widths[i], cell.count) }
        }
        func format(_ line: [String]) -> String {
            line.enumerated().map { i, cell in
                i == line.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
            }.joined(separator: " | ")
        }
        let rule = widths.enumerated().map { i, w in String(repeating: "-", count: i == widths.count - 1 ? 10 : w) }.joined(separator: "-|-")
        return ([format(header), rule] + cells.map(format)).joined(separator: "\n") + "\n"
    }
}

extension String {
    var replacingNewlines: String {
        var out = ""
        for c in self {
            if c == "\n" || c == "\r\n" { out += "\\n" } else { out.append(c) }
        }
        return out
    }
}
