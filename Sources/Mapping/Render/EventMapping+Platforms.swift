// Each platform's block of the message: `android`, `apns` and `webpush` (docs/mapping.md,
// *Per-platform options*). A platform's own value wins over the shared one.
extension EventMapping {
    typealias Members = [(key: String, value: JSONValue)]

    func androidConfig(_ r: Resolver, collapse: String?, replace: String?) throws(MappingFailure) -> JSONValue {
        let o = android
        var config: Members = []
        let own = try o.collapseKey.map { (s) throws(MappingFailure) in try r.collapseID(s, role: "android.collapse_key", forAPNs: false) }
        if let collapse = own ?? collapse { config.append(("collapse_key", .string(collapse))) }
        if let high = o.highPriority ?? highPriority { config.append(("priority", .string(high ? "HIGH" : "NORMAL"))) }
        if let ttl = o.ttl ?? ttl { config.append(("ttl", .string(r.androidTTL(ttl)))) }
        if let ok = o.directBootOK { config.append(("direct_boot_ok", .bool(ok))) }
        if let name = o.restrictedPackageName { config.append(("restricted_package_name", .string(name))) }
        // FCM's android.data replaces data on Android: both go there.
        if !o.data.isEmpty { config.append(("data", try dataObject(r, extra: o.data))) }
        if let label = o.analyticsLabel { config.append(("fcm_options", .object([("analytics_label", .string(label))]))) }
        guard !silent else { return .object(config) }
        var n: Members = []
        for (role, text) in [("title", o.title ?? title), ("body", o.body ?? body)] {
            guard let text else { continue }
            if let key = text.key {
                // Never the fallback beside the key: Android would show it and never look the key up.
                n.append(("\(role)_loc_key", .string(key.androidKey)))
                if !key.args.isEmpty { n.append(("\(role)_loc_args", try r.args(key.args, role: role))) }
            } else if let plain = text.text {
                n.append((role, .string(try r.string(plain, role: role))))
            }
        }
        for (key, source) in [
            ("channel_id", o.channelID), ("sound", o.sound), ("tag", o.tag), ("click_action", o.clickAction),
            ("icon", o.icon), ("image", o.image), ("ticker", o.ticker),
        ] {
            if let source { n.append((key, .string(try r.string(source, role: "android.\(key)")))) }
        }
        if let image { n.append(("image", .string(try r.imageURL(image)))) }  // the loader refuses it beside android.image
        if let replace { n.append(("tag", .string(replace))) }  // the loader refuses it beside android.tag
        if let color = o.color { n.append(("color", .string(try r.color(color)))) }
        if let count = o.notificationCount ?? badge {
            n.append(("notification_count", try r.countValue(count, role: o.notificationCount == nil ? "badge" : "android.notification_count")))
        }
        if let visibility = o.visibility { n.append(("visibility", .string(visibility))) }
        if let time = o.eventTime { n.append(("event_time", .string(try r.timestamp(time.pointer, unit: time.unit, role: "android.event_time")))) }
        if let sticky = o.sticky { n.append(("sticky", .bool(sticky))) }
        if let localOnly = o.localOnly { n.append(("local_only", .bool(localOnly))) }
        if let priority = o.notificationPriority { n.append(("notification_priority", .string(priority))) }
        config.append(("notification", .object(n)))
        return .object(config)
    }

    func apnsConfig(_ r: Resolver, collapseID: String?) throws(MappingFailure) -> JSONValue {
        var headers: Members = []
        var aps: Members = []
        let image = apns.image ?? image
        if silent {
            headers.append(("apns-priority", .string("5")))
            headers.append(("apns-push-type", .string("background")))
            aps.append(("content-available", .int(1)))
        } else {
            if let priority = apns.priority ?? highPriority.map({ $0 ? "10" : "5" }) { headers.append(("apns-priority", .string(priority))) }
            headers.append(("apns-push-type", .string("alert")))
            var alert: Members = []
            for (role, prefix, text) in [
                ("title", "title-", apns.title ?? title), ("subtitle", "subtitle-", apns.subtitle ?? subtitle), ("body", "", apns.body ?? body),
            ] {
                guard let text else { continue }
                if let key = text.key {
                    alert.append(("\(prefix)loc-key", .string(key.iosKey)))
                    if !key.args.isEmpty { alert.append(("\(prefix)loc-args", try r.args(key.args, role: role))) }
                }
                // The text itself, or beside a key what iOS shows when the app lacks the key.
                if let plain = text.text { alert.append((role, .string(try r.string(plain, role: role)))) }
            }
            aps.append(("alert", .object(alert)))
            if let badge = apns.badge ?? badge { aps.append(("badge", try r.countValue(badge, role: apns.badge == nil ? "badge" : "apns.badge"))) }
            if let critical = apns.criticalSound {
                var sound: Members = [("critical", .int(1)), ("name", .string(try r.string(critical.name, role: "apns.sound.name")))]
                if let volume = critical.volume { sound.append(("volume", Self.number(volume))) }
                aps.append(("sound", .object(sound)))
            }
            for (key, source) in [
                ("sound", apns.sound), ("category", apns.category), ("thread-id", apns.threadID),
                ("target-content-id", apns.targetContentID), ("filter-criteria", apns.filterCriteria),
            ] {
                if let source { aps.append((key, .string(try r.string(source, role: "apns.\(key)")))) }
            }
            if let interruption { aps.append(("interruption-level", .string(interruption.rawValue))) }
            if let relevance { aps.append(("relevance-score", Self.number(relevance))) }
            // An image reaches iOS through the app's notification service extension, which
            // runs only for a push with mutable-content (FCM's "Send an image in the
            // notification payload").
            if apns.mutableContent || image != nil { aps.append(("mutable-content", .int(1))) }
        }
        if let collapseID { headers.append(("apns-collapse-id", .string(collapseID))) }
        // Android's ttl does not reach APNs, whose default is 30 days: the same TTL as an
        // absolute expiry, so both platforms give up together (0: deliver now or never).
        if let ttl = apns.ttl ?? ttl { headers.append(("apns-expiration", .string(r.expiration(ttl)))) }
        var config: Members = [("headers", .object(headers)), ("payload", .object([("aps", .object(aps))]))]
        var options: Members = []
        if !silent, let image { options.append(("image", .string(try r.httpsURL(image, role: apns.image == nil ? "image" : "apns.image")))) }
        if let label = apns.analyticsLabel { options.append(("analytics_label", .string(label))) }
        if !options.isEmpty { config.append(("fcm_options", .object(options))) }
        return .object(config)
    }

    /// `webpush`: RFC 8030's headers, the Notifications API's options (texts only: web has no
    /// localization keys), and the link a click opens.
    func webpushConfig(_ r: Resolver, replace: String?) throws(MappingFailure) -> JSONValue {
        let o = web
        var config: Members = []
        var headers: Members = []
        if let ttl = o.ttl ?? ttl { headers.append(("TTL", .string(r.webTTL(ttl)))) }
        if let urgency = o.urgency ?? highPriority.map({ $0 ? "high" : "normal" }) { headers.append(("Urgency", .string(urgency))) }
        if let topic = o.topic { headers.append(("Topic", .string(try r.webTopic(topic)))) }
        if !headers.isEmpty { config.append(("headers", .object(headers))) }
        if !o.data.isEmpty { config.append(("data", try dataObject(r, extra: o.data))) }
        var options: Members = []
        if let link = o.link { options.append(("link", .string(try r.httpsURL(link, role: "web.link")))) }
        if let label = o.analyticsLabel { options.append(("analytics_label", .string(label))) }
        if !options.isEmpty { config.append(("fcm_options", .object(options))) }
        guard !silent else { return .object(config) }
        var n: Members = []
        for (role, text) in [("title", o.title ?? title), ("body", o.body ?? body)] {
            // A text, or beside a key its fallback (the loader requires one for web).
            if let plain = text?.text { n.append((role, .string(try r.string(plain, role: role)))) }
        }
        for (key, source) in [("image", o.image ?? image), ("icon", o.icon), ("badge", o.badge)] {
            if let source { n.append((key, .string(try r.httpsURL(source, role: o.image == nil && key == "image" ? "image" : "web.\(key)")))) }
        }
        if let tag = try o.tag.map({ (s) throws(MappingFailure) in try r.string(s, role: "web.tag") }) ?? replace { n.append(("tag", .string(tag))) }
        if let lang = o.lang { n.append(("lang", .string(try r.string(lang, role: "web.lang")))) }
        if let dir = o.dir { n.append(("dir", .string(dir))) }
        for (key, flag) in [("requireInteraction", o.requireInteraction), ("renotify", o.renotify), ("silent", o.silent)] {
            if let flag { n.append((key, .bool(flag))) }
        }
        config.append(("notification", .object(n)))
        return .object(config)
    }

    /// The shared `data` plus a platform's own keys, which win.
    func dataObject(_ r: Resolver, extra: [(key: String, value: ValueSource)]) throws(MappingFailure) -> JSONValue {
        var map: Members = []
        let own = Set(extra.map(\.key))
        for (key, source) in data where !own.contains(key) { map.append((key, .string(try r.string(source, role: "data.\(key)")))) }
        for (key, source) in extra { map.append((key, .string(try r.string(source, role: "data.\(key)")))) }
        return .object(map)
    }

    /// A JSON number as short as it reads: `1`, not `1.0`.
    static func number(_ value: Double) -> JSONValue {
        value == value.rounded() && abs(value) < 1e15 ? .int(Int64(value)) : .double(value)
    }
}
