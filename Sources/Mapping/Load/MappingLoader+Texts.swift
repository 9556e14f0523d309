import Yams

// Titles, subtitles and bodies (docs/mapping.md, *Texts*): a plain text, a localization key, or a
// key with a fallback text.
extension MappingLoader {
    /// A title, subtitle or body: a plain scalar or `{field: …}`/`{value: …}` is a text, as is
    /// `{text: …}`; `{key: …, args: […]}` a localization key, with an optional `fallback` text.
    mutating func notificationText(_ node: Node, _ what: String) -> NotificationText? {
        if node.scalar != nil { return source(node, "`\(what)`").map { NotificationText(text: $0) } }
        guard let m = mapping(node, "`\(what)`") else { return nil }
        if m["field"] != nil || m["value"] != nil || m["from"] != nil {
            return source(node, "`\(what)`").map { NotificationText(text: $0) }
        }
        if let t = m["text"] {
            if ["key", "android_key", "ios_key", "args", "fallback"].contains(where: { m[$0] != nil }) {
                fail(
                    t, "`\(what)` has both `text` and a localization key",
                    hint: "a text is shown as it is; beside a `key`, write the text as `fallback` (shown on iOS when the app lacks the key)")
                return nil
            }
            checkKeys(m, allowed: ["text"], in: "`\(what)`")
            return source(t, "`\(what)`.text").map { NotificationText(text: $0) }
        }
        if let f = m["fallback"], ["key", "android_key", "ios_key"].allSatisfy({ m[$0] == nil }) {
            fail(
                f, "`\(what)` has a `fallback` but no `key`",
                hint: "a fallback is the text iOS shows when the app lacks the key; for plain text everywhere write `\(what): {text: …}`")
            return nil
        }
        let fallback = m["fallback"].flatMap { source($0, "`\(what)`.fallback") }
        guard let key = localized(node, m, what) else { return nil }
        return NotificationText(key: key, text: fallback)
    }

    mutating func localized(_ node: Node, _ m: Node.Mapping, _ what: String) -> LocalizedText? {
        checkKeys(m, allowed: ["key", "android_key", "ios_key", "args", "fallback"], in: "`\(what)`")
        let key = m["key"].flatMap { keyString($0) }
        let androidKey = m["android_key"].flatMap { keyString($0) } ?? key.map(Self.androidKey)
        let iosKey = m["ios_key"].flatMap { keyString($0) } ?? key.map(Self.iosKey)
        var args: [ValueSource] = []
        if let a = m["args"] {
            if let list = a.sequence {
                for (i, item) in list.enumerated() { if let s = source(item, "\(what) arg \(i + 1)") { args.append(s) } }
            } else {
                fail(a, "`args` must be a list")
            }
        }
        guard let androidKey, let iosKey else {
            fail(
                node, "`\(what)` has no localization key" + (args.isEmpty ? "" : " but has args"),
                hint:
                    "add `key:` (or both `android_key:` and `ios_key:`); args fill a localized string's placeholders; a plain text is `\(what): \"…\"` or `{text: …}`"
            )
            return nil
        }
        return LocalizedText(androidKey: androidKey, iosKey: iosKey, args: args)
    }
}
