import JSON
import Localization
import Mapping

/// Glue between the mapping core and the Localization module, which knows nothing of mappings:
/// what the mappings ask of the apps' string resources, for `lint` and `preview`.
public enum LocKeyUses {
    /// Every key each mapping can send (each variant's), per platform it targets: the linter's
    /// input. Silent mappings send none.
    public static func uses(_ set: MappingSet) -> [KeyUse] {
        var uses: [KeyUse] = []
        for type in set.eventTypes {
            for m in set.mappings(of: type) where !m.silent {
                let both = m.platforms.contains(.android) && m.platforms.contains(.ios)
                for (field, notificationText) in [(KeyUse.Field.title, m.title), (.body, m.body)] {
                    guard let text = notificationText?.key else { continue }  // a plain text has no key to check
                    let location = SourceLocation(file: m.file, line: m.line)
                    if m.platforms.contains(.android) {
                        uses.append(
                            KeyUse(
                                platform: .android, key: text.androidKey, argumentCount: text.args.count, field: field,
                                eventType: type, location: location, counterpartKey: both ? text.iosKey : nil))
                    }
                    if m.platforms.contains(.ios) {
                        uses.append(
                            KeyUse(
                                platform: .ios, key: text.iosKey, argumentCount: text.args.count, field: field,
                                eventType: type, location: location, counterpartKey: both ? text.androidKey : nil))
                    }
                }
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
                title: text(n, key: "title_loc_key", args: "title_loc_args"),
                body: text(n, key: "body_loc_key", args: "body_loc_args"))
            if push.title != nil || push.body != nil { pushes.append(push) }
        }
        if let alert = message["apns"]?["payload"]?["aps"]?["alert"] {
            let push = LocalizedPush(
                platform: .ios,
                title: text(alert, key: "title-loc-key", args: "title-loc-args"),
                body: text(alert, key: "loc-key", args: "loc-args"))
            if push.title != nil || push.body != nil { pushes.append(push) }
        }
        return pushes
    }

    private static func text(_ object: JSONValue, key: String, args: String) -> LocalizedPush.Text? {
        guard case .string(let k)? = object[key] else { return nil }
        guard case .array(let values)? = object[args] else { return LocalizedPush.Text(key: k, args: nil) }
        return LocalizedPush.Text(key: k, args: values.map { if case .string(let s) = $0 { s } else { "\($0)" } })
    }
}
