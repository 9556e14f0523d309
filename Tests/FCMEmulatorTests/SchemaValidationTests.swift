import JSON
import Testing

@testable import FCMEmulator

/// What the validator makes of a message to token `t` with `members` added.
func violations(_ members: String) -> [MessageValidator.Violation]? {
    var validator = MessageValidator()
    let accepted = validator.validate(body: Array(#"{"message":{"token":"t",\#(members)}}"#.utf8))
    return accepted == nil ? validator.violations : nil
}

/// Typed validation from the discovery document's table: one accepted and one refused case per
/// format, each with its source. A refused case names the field FCM's BadRequest would name.
@Suite("The emulator checks each field by its type in the discovery document")
struct SchemaValidationTests {
    static let refused: [(members: String, field: String)] = [
        // Unknown fields at every depth (ProtoJSON: a name that is no field of the message).
        (#""android":{"notification":{"light_settings":{"colour":{}}}}"#, "message.android.notification.light_settings.colour"),
        (#""apns":{"fcm_options":{"imageUrl":"https://x.test/i.png"}}"#, "message.apns.fcm_options.imageUrl"),
        (#""webpush":{"fcm_options":{"url":"https://x.test"}}"#, "message.webpush.fcm_options.url"),
        // google-datetime (ProtoJSON Timestamp: RFC 3339 only, a real date).
        (#""android":{"notification":{"event_time":"2026-11-28 20:00:00Z"}}"#, "message.android.notification.event_time"),
        (#""android":{"notification":{"event_time":"2026-02-30T00:00:00Z"}}"#, "message.android.notification.event_time"),
        (#""android":{"notification":{"event_time":"2026-11-28T20:00:00"}}"#, "message.android.notification.event_time"),
        (#""android":{"notification":{"event_time":1764360000}}"#, "message.android.notification.event_time"),
        // google-duration everywhere (ProtoJSON Duration: an "s" suffix, at most 9 fraction digits).
        (#""android":{"notification":{"vibrate_timings":["1s","0.5"]}}"#, "message.android.notification.vibrate_timings[1]"),
        (#""android":{"notification":{"vibrate_timings":["1s",null]}}"#, "message.android.notification.vibrate_timings[1]"),
        (#""android":{"notification":{"vibrate_timings":"1s"}}"#, "message.android.notification.vibrate_timings"),
        (#""android":{"ttl":"1.0000000001s"}"#, "message.android.ttl"),
        (#""android":{"ttl":"-1s"}"#, "message.android.ttl"),
        // light_settings: its three fields are "Required."; the colour is a google.type.Color of floats.
        (
            #""android":{"notification":{"light_settings":{"color":{"red":1},"light_on_duration":"1s"}}}"#,
            "message.android.notification.light_settings.light_off_duration"
        ),
        (
            #""android":{"notification":{"light_settings":{"color":{"red":"red"},"light_on_duration":"1s","light_off_duration":"1s"}}}"#,
            "message.android.notification.light_settings.color.red"
        ),
        (
            #""android":{"notification":{"light_settings":{"color":{"green":1e39},"light_on_duration":"1s","light_off_duration":"1s"}}}"#,
            "message.android.notification.light_settings.color.green"
        ),
        // Enums: a name of the list, or its number.
        (#""android":{"priority":"urgent"}"#, "message.android.priority"),
        (#""android":{"priority":2}"#, "message.android.priority"),
        (#""android":{"notification":{"visibility":"HIDDEN"}}"#, "message.android.notification.visibility"),
        // bool, map, free JSON.
        (#""android":{"notification":{"sticky":"true"}}"#, "message.android.notification.sticky"),
        (#""android":{"data":{"k":1}}"#, "message.android.data.k"),
        (#""webpush":{"notification":"Hello"}"#, "message.webpush.notification"),
        (#""webpush":{"notification":[]}"#, "message.webpush.notification"),
        // WebpushFcmOptions.link: "For all URL values, HTTPS is required".
        (#""webpush":{"fcm_options":{"link":"http://x.test/a"}}"#, "message.webpush.fcm_options.link"),
        (#""webpush":{"fcm_options":{"link":"/a"}}"#, "message.webpush.fcm_options.link"),
    ]

    @Test("refused, naming the field", arguments: refused)
    func refusedCase(members: String, field: String) {
        let found = violations(members)
        #expect(found?.map(\.field).contains(field) == true, "\(members): \(String(describing: found))")
    }

    @Test(
        "accepted",
        arguments: [
            // Timestamps in UTC or with an offset, 0 to 9 fraction digits (ProtoJSON: "Offsets other than "Z" are also accepted").
            #""android":{"notification":{"event_time":"2026-11-28T20:00:00Z"}}"#,
            #""android":{"notification":{"eventTime":"2024-02-29T23:59:59.123456789+05:30"}}"#,
            // Durations with fractions, in every field that has one.
            #""android":{"ttl":"0.5s","notification":{"vibrate_timings":["0.1s","1.000000001s"]}}"#,
            #""android":{"notification":{"light_settings":{"color":{"red":"0.5","green":1,"blue":0,"alpha":"1e0"},"light_on_duration":"0.5s","lightOffDuration":"2s"}}}"#,
            // Floats as ProtoJSON writes the special values.
            #""android":{"notification":{"light_settings":{"color":{"red":"NaN"},"light_on_duration":"1s","light_off_duration":"1s"}}}"#,
            // An enum by name or by number (ProtoJSON: "Parsers accept both enum names and integer values").
            #""android":{"priority":1,"notification":{"visibility":"SECRET","notification_priority":5,"proxy":"DENY"}}"#,
            #""android":{"notification":{"sticky":true,"local_only":false},"data":{"k":"v"}}"#,
            #""webpush":{"notification":{"title":"Hi","actions":[{"action":"a","title":"A"}]},"fcm_options":{"link":"https://x.test/a"}}"#,
            #""webpush":{"headers":{"TTL":"60"},"data":{"k":"v"},"fcmOptions":{"analyticsLabel":"w1"}}"#,
            #""apns":{"fcm_options":{"image":"https://x.test/i.png","analytics_label":"a"},"live_activity_token":"x"}"#,
            #""notification":{"title":"T","body":"B","image":"https://x.test/i.png"},"fcm_options":{"analytics_label":"l"}"#,
        ])
    func acceptedCase(members: String) {
        let found = violations(members)
        #expect(found == nil, "\(members): \(String(describing: found))")
    }

    @Test("the descriptions FCM's BadRequest carries for each type")
    func descriptions() {
        #expect(
            violations(#""android":{"notification":{"event_time":"yesterday"}}"#)?.first?.description
                == #"Invalid value at 'message.android.notification.event_time' (type.googleapis.com/google.protobuf.Timestamp), "yesterday""#)
        #expect(
            violations(#""android":{"notification":{"notification_count":"x"}}"#)?.first?.description
                == #"Invalid value at 'message.android.notification.notification_count' (TYPE_INT32), "x""#)
        #expect(
            violations(#""android":{"ttl":"3600"}"#)?.first?.description
                == #"Invalid duration "3600": expected seconds with an "s" suffix, e.g. "3600s""#)
        #expect(
            violations(#""android":{"colour":"x"}"#)?.first?.description
                == #"Invalid JSON payload received. Unknown name "colour" at 'message.android': Cannot find field."#)
        #expect(violations(#""android":{"priority":"URGENT"}"#)?.first?.description == #"Invalid value "URGENT": expected one of HIGH, NORMAL"#)
    }
}
