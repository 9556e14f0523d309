import JSON
import Localization
import Mapping

/// Glue between the mapping core and the Localization module, which knows nothing of mappings:
/// what the mappings ask of the apps' string resources, for `lint` and `preview`.
public enum LocKeyUses {
    /// Every key each mapping can send (each variant's, and a digest's `many` beside its own),
    /// per platform it targets: the linter's input. Silent mappings send none.
    public static func uses(_ set: MappingSet) -> [KeyUse] {
        set.eventTypes.flatMap { type in
            set.mappings(of: type).flatMap { m in uses(m, eventType: type) + (m.digest.map { uses($0.many, eventType: type) } ?? []) }
        }
    }

    /// The keys one mapping sends: the shared title, subtitle and body on each platform it goes
    /// to, unless that platform's block replaces them. Subtitles exist on iOS only.
    static func uses(_ m: EventMapping, eventType type: String) -> [KeyUse] {
        guard !m.silent else { return [] }
        var uses: [KeyUse] = []
        let location = SourceLocation(file: m.file, line: m.line)
        if let activity = m.activity {
            // A Live Activity's alert: iOS only, its texts as the notification's.
            for (field, text) in [(KeyUse.Field.title, activity.alert?.title), (.body, activity.alert?.body)] {
                guard let key = text?.key else { continue }
                uses.append(
                    KeyUse(
                        platform: .ios, key: key.iosKey, argumentCount: key.args.count, field: field, eventType: type, location: location,
                        counterpartKey: nil))
            }
            return uses
        }
        let fields: [(KeyUse.Field, android: NotificationText?, ios: NotificationText?)] = [
            (.title, m.android.title ?? m.title, m.apns.title ?? m.title),
            (.subtitle, nil, m.apns.subtitle ?? m.subtitle),
            (.body, m.android.body ?? m.body, m.apns.body ?? m.body),
        ]
        for (field, androidText, iosText) in fields {
            let android = m.platforms.contains(.android) ? androidText?.key : nil
            let ios = m.platforms.contains(.ios) ? iosText?.key : nil  // a plain text has no key to check
            if let text = android {
                uses.append(
                    KeyUse(
                        platform: .android, key: text.androidKey, argumentCount: text.args.count, field: field,
                        eventType: type, location: location, counterpartKey: ios?.iosKey))
            }
            if let text = ios {
                uses.append(
                    KeyUse(
                        platform: .ios, key: text.iosKey, argumentCount: text.args.count, field: field,
                        eventType: type, location: location, counterpartKey: android?.androidKey))
            }
        }
        return uses
    }

    /// What a rendered `message` object asks each platform to show, read from its
    /// `android.notification.*_loc_*` and `apns.payload.aps.alert.*` fields.
    public static func pushes(_ message: JSONValue) -> [LocalizedPush] {
        var pushes: [LocalizedPush] = []
        if let n = message["android"]?["notification"] {
            let push = LocalizedPush(
                platform: .android,
                title: text(n, key: "title_loc_key", args: "title_loc_args", text: "title"),
                body: text(n, key: "body_loc_key", args: "body_loc_args", text: "body"))
            if push.title != nil || push.body != nil { pushes.append(push) }
        }
        if let alert = message["apns"]?["payload"]?["aps"]?["alert"] {
            let push = LocalizedPush(
                platform: .ios,
                title: text(alert, key: "title-loc-key", args: "title-loc-args", text: "title"),
                subtitle: text(alert, key: "subtitle-loc-key", args: "subtitle-loc-args", text: "subtitle"),
                body: text(alert, key: "loc-key", args: "loc-args", text: "body"))
            if push.title != nil || push.subtitle != nil || push.body != nil { pushes.append(push) }
        }
        return pushes
    }

    /// What a web push shows (`webpush.notification`'s title and body): web has no keys.
    public static func webTexts(_ message: JSONValue) -> (title: String?, body: String?)? {
        guard let n = message["webpush"]?["notification"] else { return nil }
        let title: String? = if case .string(let s)? = n["title"] { s } else { nil }
        let body: String? = if case .string(let s)? = n["body"] { s } else { nil }
        return title == nil && body == nil ? nil : (title, body)
    }

    private static func text(_ object: JSONValue, key: String, args: String, text: String) -> LocalizedPush.Text? {
        // A Live Activity alert writes a key as `{"loc-key", "loc-args"}` in the text's place.
        if case .object? = object[text], let loc = object[text] { return self.text(loc, key: "loc-key", args: "loc-args", text: "") }
        let plain: String? = if case .string(let s)? = object[text] { s } else { nil }
        guard case .string(let k)? = object[key] else { return plain.map { LocalizedPush.Text(key: nil, args: nil, text: $0) } }
        guard case .array(let values)? = object[args] else { return LocalizedPush.Text(key: k, args: nil, text: plain) }
        return LocalizedPush.Text(key: k, args: values.map { if case .string(let s) = $0 { s } else { "\($0)" } }, text: plain)
    }
}
