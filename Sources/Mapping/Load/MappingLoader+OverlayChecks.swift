import Yams

// The `fcm:` overlay against the rest of its mapping: the platforms it goes to, a silent push,
// and the fields the mapping's other keys already render.
extension MappingLoader {
    /// What a silent push may not add: anything shown.
    static let displayedPaths: [[String]] = [
        ["notification"], ["android", "notification"], ["apns", "payload", "aps", "alert"], ["apns", "payload", "aps", "sound"],
        ["apns", "payload", "aps", "badge"], ["webpush", "notification"],
    ]

    mutating func checkOverlayLeaves(_ leaves: [OverlayLeaf], _ m: Node.Mapping, _ mapping: EventMapping) {
        var reported = Set<String>()
        for leaf in leaves {
            for (section, platform) in [("android", Platform.android), ("apns", .ios)]
            where leaf.path.first == section && !mapping.platforms.contains(platform) && reported.insert(section).inserted {
                fail(
                    leaf.node, "`fcm.\(section)` is for \(platform.rawValue), and this push does not go to \(platform.rawValue)",
                    hint: "remove it, or add \(platform.rawValue) to `platforms`")
            }
            if mapping.silent, let shown = Self.displayedPaths.first(where: { leaf.path.starts(with: $0) }) {
                fail(
                    leaf.node, "a silent push shows no notification, so `fcm.\(leaf.dotted)` would be dropped",
                    hint: "remove it, or `silent: true`; \(shown.joined(separator: ".")) is what a notification shows")
            }
        }
        // What the mapping's other keys render, with a hole for every value from the event:
        // whatever first-class keys there are, their paths are in this tree.
        var firstClass = mapping
        firstClass.overlay = nil
        let r = Resolver(event: DecodedEvent(type: mapping.eventType, id: "", data: .null, format: .json), now: 0, recorder: HoleRecorder())
        guard let members = try? firstClass.sharedMembers(r) else { return }  // an invalid literal, reported already
        var rendered: [[String]] = []
        Self.leafPaths(.object(members), [], into: &rendered)
        let renderedKeys = rendered.map(Self.comparable)
        for leaf in leaves {
            let paths = ([leaf.path] + (Self.shadows[leaf.dotted] ?? [])).map(Self.comparable)
            guard let index = renderedKeys.firstIndex(where: { r in paths.contains { r.starts(with: $0) || $0.starts(with: r) } }) else {
                continue
            }
            let hit = rendered[index]
            let path = hit.joined(separator: ".")
            let owner = Self.ownerKey(of: hit, in: m).map { "`\($0)`" } ?? "another key of this mapping"
            fail(
                leaf.node, "`fcm.\(leaf.dotted)` sets \(path), which \(owner) already sets: keep one",
                hint: "the overlay adds fields the mapping's own keys do not render")
        }
        let all = Set(rendered.map { $0.joined(separator: ".") } + leaves.map(\.dotted))
        // iOS fetches the image in the app's notification service extension, which runs only for
        // a push with mutable-content (FCM's "Send an image in the notification payload").
        if let image = leaves.first(where: { $0.dotted == "apns.fcm_options.image" }), !all.contains("apns.payload.aps.mutable-content") {
            fail(
                image.node, "`fcm.apns.fcm_options.image` shows on iOS only with apns.payload.aps.mutable-content: 1",
                hint: "add `mutable-content: 1` under `fcm.apns.payload.aps`, or use the mapping's `image:`, which sets both")
        }
        // FCM refuses loc args without their key.
        for leaf in leaves {
            guard leaf.path.count == 3, leaf.path.prefix(2) == ["android", "notification"], leaf.path[2].hasSuffix("_loc_args") else { continue }
            let key = leaf.path[2].replacingOccurrences(of: "_loc_args", with: "_loc_key")
            if !all.contains("android.notification.\(key)") {
                fail(leaf.node, "`fcm.\(leaf.dotted)` needs android.notification.\(key)", hint: "FCM refuses loc args without their key")
            }
        }
    }

    /// What else a field decides on the phone: FCM copies the shared `notification` into each
    /// platform's, where Android shows a plain text and never looks up a key beside it
    /// (firebase-android-sdk, `NotificationParams.getPossiblyLocalizedString`).
    static let shadows: [String: [[String]]] = [
        "notification.title": [
            ["android", "notification", "title"], ["android", "notification", "title_loc_key"], ["apns", "payload", "aps", "alert", "title"],
            ["apns", "payload", "aps", "alert", "title-loc-key"],
        ],
        "notification.body": [
            ["android", "notification", "body"], ["android", "notification", "body_loc_key"], ["apns", "payload", "aps", "alert", "body"],
            ["apns", "payload", "aps", "alert", "loc-key"],
        ],
        "notification.image": [["android", "notification", "image"], ["apns", "fcm_options", "image"]],
        "android.notification.title": [["android", "notification", "title_loc_key"]],
        "android.notification.body": [["android", "notification", "body_loc_key"]],
    ]

    /// A path as compared: header names are case-insensitive (HTTP/2 sends them lowercase).
    static func comparable(_ path: [String]) -> [String] {
        guard path.count > 2, path[1] == "headers" else { return path }
        return path.prefix(2) + path.dropFirst(2).map { $0.lowercased() }
    }

    /// The paths of a JSON tree's values that are not objects (an empty object counts as none).
    static func leafPaths(_ value: JSONValue, _ path: [String], into out: inout [[String]]) {
        guard case .object(let members) = value else {
            out.append(path)
            return
        }
        for (key, member) in members { leafPaths(member, path + [key], into: &out) }
    }

    /// A best guess at the mapping key that renders `path`, for the message: a top-level key,
    /// or a key of a top-level map, named like the path's last part (`thread-id`: `thread_id`).
    static func ownerKey(of path: [String], in m: Node.Mapping) -> String? {
        guard let last = path.last?.replacingOccurrences(of: "-", with: "_") else { return nil }
        let names = [last, last.hasPrefix("apns_") ? String(last.dropFirst(5)) : last]
        for (k, v) in m {
            guard let key = k.scalar?.string, key != "fcm" else { continue }
            if names.contains(key) { return key }
            if let inner = v.mapping, let sub = inner.keys.compactMap(\.scalar?.string).first(where: names.contains) { return "\(key).\(sub)" }
        }
        return nil
    }
}
