/// The `data` keys FCM or its Android SDK take for themselves.
///
/// - **Refused** (a load error): `from`, which FCM's v1 API answers with "Invalid data payload
///   key: from" (observed: firebase-admin-go#159, beste/firebase-php#574); `message_type`, and
///   keys starting `google.` or `gcm.`. The v1 reference (discovery document revision 20261023,
///   `Message.data`) reserves `from`, `message_type` and the prefixes `google.` and
///   `gcm.notification.`; the Android SDK reads `gcm.n.*` and `gcm.notification.*` as notification
///   fields and drops every `google.` and `gcm.` key from `RemoteMessage.getData()`
///   (firebase-android-sdk, `Constants.MessagePayloadKeys.extractDeveloperDefinedPayload`), so
///   such a key is a bug even where FCM takes it. Case-insensitive: Play services strips
///   `google.` extras whatever their case.
/// - **Dropped on Android** (a warning): `collapse_key`, left out of `getData()` by the same SDK
///   line; iOS and web apps still get it.
///
/// Keys that only start with the letters, `google_place_id` or `gcmVersion`, are the app's own:
/// the reference stopped reserving "any word starting with google or gcm" in revision 20240703,
/// and no rejection of one has been published.
enum ReservedDataKey: Equatable {
    case refused
    case droppedOnAndroid

    /// Nil for a key the app gets on every platform.
    init?(_ key: String) {
        let lower = key.lowercased()
        if lower == "from" || lower == "message_type" || lower.hasPrefix("google.") || lower.hasPrefix("gcm.") {
            self = .refused
        } else if lower == "collapse_key" {
            self = .droppedOnAndroid
        } else {
            return nil
        }
    }

    static let refusedHint =
        "rename it: FCM refuses `from` and reserves `message_type` and keys starting `google.` or `gcm.` (Android's SDK drops them)"
}
