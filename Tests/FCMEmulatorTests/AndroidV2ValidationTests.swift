import Testing

@testable import FCMEmulator

/// `Message.androidV2` (AndroidConfigV2, new in discovery revision 20261023): accepted with its
/// own schema, and "Mutually exclusive with `android`. Requests with both `AndroidConfig` and
/// `AndroidConfigV2` will be rejected" (the document's `Message.androidV2`).
@Suite("The emulator takes androidV2 as FCM does")
struct AndroidV2ValidationTests {
    @Test("a V2 message with a remote notification, its id, light settings and background sync is accepted")
    func accepted() {
        for members in [
            #""androidV2":{"ttl":"60s","collapseKey":"c","data":{"k":"v"},"remoteNotification":{"mutableContent":true,"notification":{"titleLocKey":"t","titleLocArgs":["a"],"id":"7","tag":"x","eventTime":"2026-11-28T20:00:00Z","vibrateTimings":["0.1s","0.2s"],"lightSettings":{"color":{"red":1},"lightOnDuration":"1s","lightOffDuration":"1s"},"visibility":"PUBLIC"}}}"#,
            #""android_v2":{"background_sync":{},"restricted_satellite_ok":true,"fcm_options":{"analytics_label":"v2"}}"#,
            #""android_v2":{"remote_notification":{"use_as_v1_data_message":true,"notification":{"id":-3}}}"#,
        ] {
            let found = violations(members)
            #expect(found == nil, "\(members): \(String(describing: found))")
        }
    }

    @Test(
        "refused: both android and androidV2, fields V2 does not have, its own types",
        arguments: [
            (#""android":{"priority":"HIGH"},"androidV2":{"ttl":"60s"}"#, "message"),
            (#""android":{},"android_v2":{}"#, "message"),
            (#""android_v2":{"priority":"HIGH"}"#, "message.android_v2.priority"),  // V2 has no priority
            (#""android_v2":{"remote_notification":{"notification":{"proxy":"DENY"}}}"#, "message.android_v2.remote_notification.notification.proxy"),
            (#""android_v2":{"remote_notification":{"notification":{"id":1.5}}}"#, "message.android_v2.remote_notification.notification.id"),
            (#""android_v2":{"background_sync":{"now":true}}"#, "message.android_v2.background_sync.now"),
            (#""android_v2":{"background_sync":true}"#, "message.android_v2.background_sync"),
            (#""android_v2":{"ttl":"2419201s"}"#, "message.android_v2.ttl"),
            (
                #""android_v2":{"remote_notification":{"notification":{"body_loc_args":["x"]}}}"#,
                "message.android_v2.remote_notification.notification.body_loc_args"
            ),
        ])
    func refused(members: String, field: String) {
        let found = violations(members)
        #expect(found?.map(\.field).contains(field) == true, "\(members): \(String(describing: found))")
    }

    @Test("android and androidV2 together: one violation on message, as the document words it")
    func exclusive() {
        #expect(
            violations(#""android":{},"androidV2":{}"#)?.map(\.description) == [
                "Message.android and Message.android_v2 are mutually exclusive: requests with both AndroidConfig and AndroidConfigV2 are rejected"
            ])
    }
}
