import JSON

// A Live Activity push (`apns.live_activity_token`): what a device would ignore or mishandle in
// its `aps` dictionary. Sources: Apple, "Starting and updating Live Activities with ActivityKit
// push notifications" (A1) and "Displaying live data with Live Activities" (A2: an update older
// than the shown one is ignored; content-state at most 4 KB); the `alert` forms of TypeScript
// APNs clients (TS1) and Apple's `AlertConfiguration` (A9); forum thread 776165 (a timestamp hours
// ahead is dropped: observed). The device reads none of these from FCM; FCM passes them through.
extension Notes {
    mutating func liveActivity(_ aps: JSONValue?, _ path: String, headers: JSONValue?, token: JSONValue) {
        let event: String? = if case .string(let e)? = DeviceNote.member(aps, "event") { e } else { nil }
        if !["start", "update", "end"].contains(event ?? "") {
            add("\(path).event", "a Live Activity push needs event start, update or end (A1)")
        }
        switch DeviceNote.member(aps, "timestamp") {
        case .int(let t)? where t > nowSeconds + 8 * 3600:
            add("\(path).timestamp", "a timestamp hours ahead is dropped: it looks like milliseconds, not seconds (forum 776165, observed)")
        case .int?: break
        default: add("\(path).timestamp", "a Live Activity push needs timestamp, UNIX seconds as an integer: the device orders updates by it (A2)")
        }
        let state = DeviceNote.member(aps, "content-state")
        switch state {
        case .object?:
            if JSONWriter.write(state!).count > 4096 { add("\(path).content-state", "content-state is over 4 KB, which ActivityKit refuses (A2)") }
        case nil where event == "end": break
        default: add("\(path).content-state", "start and update need content-state, an object the app's ContentState decodes (A1)")
        }
        for key in ["stale-date", "dismissal-date"] {
            guard let date = DeviceNote.member(aps, key) else { continue }
            if case .int = date {} else { add("\(path).\(key)", "\(key) is UNIX seconds as an integer (A1)") }
            if key == "dismissal-date", event != "end" { add("\(path).\(key)", "dismissal-date applies to an end event only (A1)") }
        }
        if event == "start" {
            if case .string? = DeviceNote.member(aps, "attributes-type") {
            } else {
                add("\(path).attributes-type", "push-to-start needs attributes-type, the ActivityAttributes type's name (A1)")
            }
            if case .object? = DeviceNote.member(aps, "attributes") {
            } else {
                add("\(path).attributes", "push-to-start needs attributes, an object (A1)")
            }
            if DeviceNote.member(aps, "alert") == nil { add("\(path).alert", "push-to-start needs an alert (observed: TK1, forum 799195)") }
        }
        if let alert = DeviceNote.member(aps, "alert") { liveActivityAlert(alert, "\(path).alert", sound: DeviceNote.member(aps, "sound") != nil) }
        if let input = DeviceNote.member(aps, "input-push-token"), input != .int(1) {
            add("\(path).input-push-token", "input-push-token is the number 1 (A1)")
        }
        if DeviceNote.member(aps, "input-push-channel") != nil {
            add("\(path).input-push-channel", "broadcast channels are APNs' own: FCM offers none")
        }
        for key in ["badge", "content-available", "mutable-content", "category", "thread-id"] where DeviceNote.member(aps, key) != nil {
            add("\(path).\(key)", "a Live Activity push does not use \(key) (A1 lists no such key for ActivityKit)")
        }
        for (name, value) in DeviceNote.members(headers) where name.lowercased() == "apns-priority" && value == .string("1") {
            add(path.replacingOccurrences(of: ".payload.aps", with: ".headers.\(name)"), "a Live Activity push is sent at priority 5 or 10 (A1)")
        }
    }

    /// `alert`: an object whose `title` (required, observed) and `body` are a string or
    /// `{loc-key, loc-args}`; its sound inside it, not `aps.sound` (TS1, A9).
    private mutating func liveActivityAlert(_ alert: JSONValue, _ path: String, sound: Bool) {
        guard case .object = alert else {
            add(path, "a Live Activity alert is an object with title and body (TS1, A9)")
            return
        }
        if DeviceNote.member(alert, "title") == nil { add("\(path).title", "a Live Activity alert needs a title (observed: OS1)") }
        for key in ["title", "body"] {
            guard let text = DeviceNote.member(alert, key) else { continue }
            if case .string = text { continue }
            let locKey = DeviceNote.member(text, "loc-key")
            let args = DeviceNote.member(text, "loc-args")
            let argsOK: Bool =
                switch args {
                case nil: true
                case .array(let items)?: items.allSatisfy { if case .string = $0 { true } else { false } }
                default: false
                }
            if case .string? = locKey, argsOK { continue }
            add("\(path).\(key)", "\(key) is a string or {loc-key, loc-args} with string args (TS1)")
        }
        if sound { add(path.replacingOccurrences(of: ".alert", with: ".sound"), "a Live Activity's sound goes in alert.sound (A9)") }
    }
}
