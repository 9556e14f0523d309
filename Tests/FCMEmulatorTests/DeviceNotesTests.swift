import JSON
import Testing

@testable import FCMEmulator

/// The notes on a message to token `t` with `members` added, which must be accepted.
func notes(_ members: String) -> [DeviceNote]? {
    var validator = MessageValidator()
    guard let accepted = validator.validate(body: Array(#"{"message":{"token":"t",\#(members)}}"#.utf8)) else { return nil }
    return DeviceNote.notes(for: accepted.message)
}

/// What FCM passes through but a phone would ignore: accepted, and noted on the record.
@Suite("Device notes: what FCM accepts and a device would ignore")
struct DeviceNotesTests {
    @Test(
        "each rule notes its field",
        arguments: [
            // aps values are free JSON to FCM (ApnsConfig.payload): a string badge is forwarded, and ignored.
            (#""apns":{"payload":{"aps":{"badge":"3"}}}"#, "message.apns.payload.aps.badge"),
            (#""apns":{"payload":{"aps":{"badge":-1}}}"#, "message.apns.payload.aps.badge"),
            (#""apns":{"payload":{"aps":{"content-available":"1"}}}"#, "message.apns.payload.aps.content-available"),
            (#""apns":{"payload":{"aps":{"mutable-content":true}}}"#, "message.apns.payload.aps.mutable-content"),
            (#""apns":{"payload":{"aps":{"interruption-level":"time-senstive"}}}"#, "message.apns.payload.aps.interruption-level"),
            (#""apns":{"payload":{"aps":{"relevance-score":"0.5"}}}"#, "message.apns.payload.aps.relevance-score"),
            (#""apns":{"payload":{"aps":{"relevance-score":1.5}}}"#, "message.apns.payload.aps.relevance-score"),
            (#""apns":{"fcm_options":{"image":"https://x.test/i.png"},"payload":{"aps":{}}}"#, "message.apns.fcm_options.image"),
            (#""apns":{"headers":{"apns-topic":"com.example.app"}}"#, "message.apns.headers.apns-topic"),
            (#""android":{"notification":{"title":"Hi","title_loc_key":"k"}}"#, "message.android.notification.title_loc_key"),
            (#""notification":{"body":"Hi"},"android":{"notification":{"body_loc_key":"k"}}"#, "message.android.notification.body_loc_key"),
            (#""android":{"notification":{"notification_count":-2}}"#, "message.android.notification.notification_count"),
            (#""android":{"notification":{"vibrate_timings":["1s"]}}"#, "message.android.notification.vibrate_timings"),
            (
                #""android":{"notification":{"light_settings":{"color":{"red":1,"alpha":0},"light_on_duration":"1s","light_off_duration":"1s"}}}"#,
                "message.android.notification.light_settings.color.alpha"
            ),
            (#""data":{"gcm.n.title":"x"}"#, "message.data.gcm.n.title"),
            (#""data":{"collapse_key":"x"}"#, "message.data.collapse_key"),
            (#""android":{"data":{"Google.x":"v"}}"#, "message.android.data.Google.x"),
            (
                #""android_v2":{"remote_notification":{"notification":{"title":"T","title_loc_key":"k"}}}"#,
                "message.android_v2.remote_notification.notification.title_loc_key"
            ),
            (#""webpush":{"headers":{"Urgency":"urgent"}}"#, "message.webpush.headers.Urgency"),
            (#""webpush":{"headers":{"TTL":"1h"}}"#, "message.webpush.headers.TTL"),
            (#""webpush":{"headers":{"Topic":"a topic with spaces"}}"#, "message.webpush.headers.Topic"),
        ])
    func noted(members: String, field: String) {
        let found = notes(members)
        #expect(found?.map(\.field) == [field], "\(members): \(String(describing: found))")
    }

    @Test("what pushbridge's mappings send today has none")
    func none() {
        for members in [
            #""android":{"priority":"HIGH","ttl":"3600s","collapse_key":"c","notification":{"title_loc_key":"t","title_loc_args":["A"],"body_loc_key":"b","channel_id":"c","notification_count":3}},"data":{"order_id":"1","google_place_id":"p","gcmVersion":"2"}"#,
            #""apns":{"headers":{"apns-priority":"10","apns-push-type":"alert","apns-collapse-id":"c","apns-expiration":"1764360000"},"payload":{"aps":{"alert":{"title-loc-key":"t","loc-key":"b","loc-args":["x"]},"badge":3,"sound":"default","mutable-content":1,"interruption-level":"time-sensitive","relevance-score":0.5}},"fcm_options":{"image":"https://x.test/i.png"}}"#,
            #""apns":{"headers":{"apns-priority":"5","apns-push-type":"background"},"payload":{"aps":{"content-available":1}}}"#,
            #""webpush":{"headers":{"TTL":"60","Urgency":"high","Topic":"order_1-A"}}"#,
            #""android":{"notification":{"vibrate_timings":["0.1s","0.2s"],"light_settings":{"color":{"red":1},"light_on_duration":"1s","light_off_duration":"1s"}}}"#,
        ] {
            let found = notes(members)
            #expect(found == [], "\(members): \(String(describing: found))")
        }
    }

    /// The v1 reference (discovery revision 20261023, Message.data): "must not contain reserved
    /// words ("from", "message_type", or any word starting with "google." or "gcm.notification.")".
    @Test(
        "reserved data keys: from, message_type, google. and gcm.notification. refused; other google/gcm keys accepted",
        arguments: [
            ("from", false), ("message_type", false), ("google.c.a.e", false), ("google.", false), ("gcm.notification.title", false),
            ("googlePlaceId", true), ("gcm_version", true), ("gcm.n.title", true), ("notification", true), ("FROM", true),
        ])
    func reservedDataKeys(key: String, accepted: Bool) {
        let found = violations(#""data":{"\#(key)":"v"}"#)
        #expect((found == nil) == accepted, "\(key): \(String(describing: found))")
        if !accepted { #expect(found?.map(\.field) == ["message.data.\(key)"]) }
    }

    @Test("aps badge, content-available and mutable-content are not proto fields: no int32 check, a string badge accepted")
    func apsNotProto() {
        #expect(violations(#""apns":{"payload":{"aps":{"badge":"3","content-available":"yes","mutable-content":1.5}}}"#) == nil)
    }

    @Test("the record's JSON carries the notes")
    func recorded() throws {
        let note = DeviceNote(field: "message.apns.payload.aps.badge", note: "n")
        let record = RecordedMessage(
            time: 0, project: "p", token: "t", message: .object([]), validateOnly: false, name: "projects/p/messages/1", deviceNotes: [note])
        let json = record.json
        #expect(json["device_notes"] == .array([.object([("field", .string(note.field)), ("note", .string("n"))])]))
    }
}

/// A Live Activity push (`apns.live_activity_token`): refused when FCM's clients refuse it, noted
/// where a device would ignore it (docs/emulator.md, *Live Activities*).
@Suite("Live Activity pushes in the emulator")
struct LiveActivityEmulatorTests {
    static let now: Int64 = 1_800_000_000

    static func apns(
        _ aps: String, headers: String = #""apns-push-type":"liveactivity","apns-priority":"10""#, token: String = #""la-1""#
    )
        -> String
    {
        #""apns":{"live_activity_token":\#(token),"headers":{\#(headers)},"payload":{"aps":{\#(aps)}}}"#
    }

    static func notes(_ members: String) -> [String]? {
        var validator = MessageValidator()
        guard let accepted = validator.validate(body: Array(#"{"message":{"token":"t",\#(members)}}"#.utf8)) else { return nil }
        return DeviceNote.notes(for: accepted.message, nowSeconds: now).map(\.field)
    }

    @Test("an update, an end and a start as Apple documents them: accepted, nothing noted")
    func documented() {
        let update =
            #""event":"update","timestamp":1800000000,"content-state":{"stage":"picked_up","eta":12},"alert":{"title":{"loc-key":"LA_TITLE","loc-args":["Ana"]},"body":"On the way","sound":"default"}"#
        let end = #""event":"end","timestamp":1800000100,"dismissal-date":1800003600,"content-state":{"stage":"delivered"}"#
        let start =
            #""event":"start","timestamp":1800000000,"content-state":{"stage":"placed"},"attributes-type":"OrderAttributes","attributes":{"order":"o-1"},"alert":{"title":"Order placed"},"input-push-token":1"#
        for aps in [update, end, start] { #expect(Self.notes(Self.apns(aps)) == [], "\(aps)") }
    }

    @Test("an empty token, or another push type, is refused")
    func refused() {
        var validator = MessageValidator()
        let empty = #"{"message":{"token":"t",\#(Self.apns(#""event":"end","timestamp":1"#, token: #""""#))}}"#
        #expect(validator.validate(body: Array(empty.utf8)) == nil)
        #expect(validator.violations.map(\.field) == ["message.apns.live_activity_token"])
        var other = MessageValidator()
        let alert = #"{"message":{"token":"t",\#(Self.apns(#""event":"end","timestamp":1"#, headers: #""apns-push-type":"alert""#))}}"#
        #expect(other.validate(body: Array(alert.utf8)) == nil)
        #expect(other.violations.map(\.field) == ["message.apns.headers.apns-push-type"])
        // Apple's newer push types are known values.
        for type in ["widgets", "controls"] {
            var known = MessageValidator()
            #expect(known.validate(body: Array(#"{"message":{"token":"t","apns":{"headers":{"apns-push-type":"\#(type)"}}}}"#.utf8)) != nil)
        }
    }

    @Test(
        "what a device would ignore is noted at its field",
        arguments: [
            (#""timestamp":1800000000,"content-state":{}"#, "message.apns.payload.aps.event"),
            (#""event":"update","content-state":{}"#, "message.apns.payload.aps.timestamp"),
            (#""event":"update","timestamp":1800000000000,"content-state":{}"#, "message.apns.payload.aps.timestamp"),
            (#""event":"update","timestamp":1800000000"#, "message.apns.payload.aps.content-state"),
            (#""event":"update","timestamp":1800000000,"content-state":{},"dismissal-date":1800003600"#, "message.apns.payload.aps.dismissal-date"),
            (#""event":"end","timestamp":1800000000,"stale-date":"soon""#, "message.apns.payload.aps.stale-date"),
            (#""event":"update","timestamp":1800000000,"content-state":{},"alert":{"body":"b"}"#, "message.apns.payload.aps.alert.title"),
            (
                #""event":"update","timestamp":1800000000,"content-state":{},"alert":{"title":{"loc-args":["x"]}}"#,
                "message.apns.payload.aps.alert.title"
            ),
            (
                #""event":"update","timestamp":1800000000,"content-state":{},"alert":{"title":"t"},"sound":"default""#,
                "message.apns.payload.aps.sound"
            ),
            (#""event":"update","timestamp":1800000000,"content-state":{},"badge":1"#, "message.apns.payload.aps.badge"),
            (#""event":"update","timestamp":1800000000,"content-state":{},"input-push-token":true"#, "message.apns.payload.aps.input-push-token"),
        ])
    func noted(aps: String, field: String) {
        #expect(Self.notes(Self.apns(aps)) == [field], "\(aps)")
    }

    @Test("push-to-start without its attributes or alert, and Live Activity keys without a token, are noted")
    func startAndNoToken() {
        #expect(
            Self.notes(Self.apns(#""event":"start","timestamp":1800000000,"content-state":{}"#)) == [
                "message.apns.payload.aps.attributes-type", "message.apns.payload.aps.attributes", "message.apns.payload.aps.alert",
            ])
        #expect(
            Self.notes(#""apns":{"payload":{"aps":{"event":"update","content-state":{}}}}"#) == [
                "message.apns.payload.aps.event", "message.apns.payload.aps.content-state",
            ])
        #expect(
            Self.notes(Self.apns(#""event":"end","timestamp":1800000000"#, headers: #""apns-push-type":"liveactivity","apns-priority":"1""#))
                == ["message.apns.headers.apns-priority"])
    }
}
