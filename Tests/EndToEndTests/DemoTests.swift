import Dates
import Foundation
import TestSupport
import Testing

/// The built `pushbridge` executable, beside the test bundle.
let pushbridgeExecutable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    .deletingLastPathComponent().appendingPathComponent("pushbridge").path

@Suite("pushbridge demo (the README's first command)")
struct DemoTests {
    @Test("runs the real pipeline with no external services, previews each push per locale, and exits 0")
    func demo() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-demo-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let process = try ChildProcess(
            executable: pushbridgeExecutable,
            arguments: ["demo", "--examples", Repository.root + "/examples", "--locale", "en,fr,de,ar,tr"], logFile: log)
        let status = await process.wait(timeout: .seconds(180))
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(status == 0, "\(output.suffix(3000))")
        #expect(output.contains("31 events → 26 pushes accepted, 2 dead-lettered, 1 token invalidations"), "\(output.suffix(2000))")
        // examples/mappings/orders.yaml: each order.status_changed event takes its variant; a
        // status no variant matches is skipped (unmatched: skip).
        #expect(output.contains(#"order-status-shipped.json: variant: shipped (/status = "shipped")"#), "\(output.prefix(3000))")
        #expect(output.contains(#"order-status-nearby.json: variant: out_for_delivery (/status in ["out_for_delivery", "nearby"])"#))
        #expect(output.contains("order-status-returned.json: no variant matched: skipped"))
        // examples/mappings/marketplace.yaml: one event, a push to the buyer and one to the seller.
        #expect(output.contains("order-paid.json: pushes: buyer, seller"), "\(output.prefix(3000))")
        #expect(output.contains("| new_sale_body | [\"Alice\", \"1077\"] | Alice a acheté la commande n° 1077."), "\(output)")
        // The event to user-42 reaches both phones the device registry lists (a token and an FID).
        #expect(output.contains("== device registry pushbridge.devices: 3 users, 4 devices"), "\(output.prefix(2000))")
        #expect(output.contains("✓ fid …3DkBcZ") && output.contains("✓ token …2ZAt6m"), "\(output)")
        // The preview of delivered pushes: FCM's own `%1$d` example crashes Android apps.
        #expect(output.contains("| welcome_title | [\"Alice\"] | Bienvenue, Alice !"))
        #expect(output.contains("✗ Android: IllegalFormatConversionException"))
        #expect(output.contains("مرحبًا بك يا Alice!"), "Arabic text is kept intact")
        #expect(output.contains("Hoş geldin") || output.contains("Hoş geldiniz"), "Turkish preview")
        #expect(output.contains("[invalid_json]") && output.contains("[missing_field]"))
        #expect(output.contains(#""reason":"UNREGISTERED""#) && output.contains(#""token":"dead-token-of-zoe""#), "\(output.suffix(6000))")
        #expect(output.contains("FCM requests: 27 (26× 200, 1× 404)"), "\(output.suffix(2000))")
        // examples/mappings/activities.yaml: an order's Live Activity started on user-42's iPhone
        // through its push-to-start token, updated and ended; each APNs payload printed, and the
        // phone's final state from the emulator's board.
        #expect(
            output.contains(
                #""attributes-type":"DeliveryAttributes","content-state":{"eta":817674300,"progress":0,"status":"confirmed"},"event":"start","input-push-token":1"#
            ), "\(output)")
        #expect(output.contains(#""content-state":{"courier":"Ana","eta":817674000,"progress":0.6,"status":"picked_up"},"event":"update""#))
        #expect(output.contains("| ORDER_PICKED_UP_TITLE | [\"Ana\"] | Ana hat deine Bestellung abgeholt."), "\(output)")
        #expect(output.contains(#"◆ …b6d8e7 end"#) && output.contains("(2 applied, 0 ignored)"), "\(output)")
        // The web push shows its plain text; the image push its keys' strings.
        #expect(output.contains("web: Talks resume in Geneva — Negotiators meet again after a month."), "\(output)")
        #expect(output.contains("| delivery_photo_body  | [\"Ana\"] | Ana a déposé votre colis à la porte."), "\(output)")
        // docs/rules.md: user-44 muted chats; user-43's quiet hours are around now (in UTC).
        #expect(output.contains(#"⏸ chat.message to user-44 [muted] user user-44 muted the category "chats""#), "\(output)")
        #expect(output.contains("⏸ chat.message to user-43 [quiet_hours] local time ") && output.contains(" in UTC is inside the quiet hours "))
        // examples/registry/mapping.yaml's post.liked, capped at 2 per user per hour, its events
        // keyed by user (direct mode): of user-44's three likes one is withheld by the cap (which
        // one depends on the order they are decided in); user-42's like, written twice with one
        // event ID, is sent once, the repeat withheld as a duplicate. None is dead-lettered
        // not_keyed_by_subject.
        #expect(
            output.contains(
                "== caps and dedup: their events keyed by user (partitioner: consistent), changelog pushbridge.pushbridge-demo.rules-changelog"))
        let withheld = output.split(separator: "\n").filter { $0.hasPrefix("⏸ post.liked ") }
        #expect(withheld.count == 2, "\(withheld)")
        #expect(
            withheld.filter { $0.hasPrefix("⏸ post.liked to user-44 [cap] the cap's 2 pushes within its window are reached (evt-101") }.count == 1,
            "\(withheld)")
        #expect(
            withheld.contains {
                $0.hasPrefix("⏸ post.liked to user-42 [duplicate] FCM already acknowledged this push") && $0.hasSuffix(" (evt-1013)")
            }, "\(withheld)")
        #expect(!output.contains("not_keyed_by_subject"), "\(output)")
        // The pushes the emulator accepted: two likes to user-44's one phone (the third is over
        // the cap: user-44's chat is muted, so every push to that phone is a like), and user-42's
        // like once to each of their two phones (the repeat not sent again).
        #expect(output.split(separator: "\n").filter { $0.hasPrefix("✓ token …ser-44 ") }.count == 2, "\(output)")
        let likes = ["Ana", "Bob", "Chen"].filter { output.contains("| post_liked_body | [\"\($0)\"] | \($0) liked your post.") }
        #expect(likes.count == 2, "\(output)")
        let dana = #"  en     | android  | body  | post_liked_body | ["Dana"] | Dana liked your post."#
        #expect(output.components(separatedBy: dana).count - 1 == 2, "one push to each of user-42's phones: \(output)")
        #expect(output.contains(#"| POST_LIKED_BODY | ["Dana"] | Dana gefällt dein Beitrag."#), "\(output)")
        // examples/mappings/app.yaml's reminder.due (send_at: {after: 20s}): deferred to the timer
        // topic, then sent by the timer engine, not before its due time.
        #expect(output.contains("== 1 push waits in the timer topic pushbridge.pushbridge-demo.timers until "), "\(output.prefix(3000))")
        let deferred = try #require(output.split(separator: "\n").first { $0.hasPrefix("⏲ reminder.due (evt-1020) due ") }, "\(output)")
        let times = deferred.split(separator: " ").compactMap { RFC3339.parseMilliseconds(String($0.trimmingCharacters(in: .punctuationCharacters))) }
        #expect(deferred.contains(": sent at ") && times.count == 2 && times[1] >= times[0], "\(deferred)")
        #expect(output.contains("fr     | android  | body  | reminder_body | [\"Dentist at 09:00\"] | Rappel : Dentist at 09:00"), "\(output)")
        // examples/registry's comment.created (digest: 10 s per user and post): three comments, one
        // push to each of user-42's phones at the window's end, with the count and the first actor.
        #expect(output.contains("== 3 events wait in 1 digest window until "), "\(output.prefix(3000))")
        let digest = try #require(output.split(separator: "\n").first { $0.hasPrefix("⧉ comment.created (") }, "\(output)")
        #expect(digest.contains("evt-1030") && digest.contains("evt-1032") && digest.contains(": 2 pushes sent at "), "\(digest)")
        let manyText = output.split(separator: "\n").filter { $0.contains("| comment_digest_body | [") && $0.contains("and others left 3 comments") }
        #expect(!manyText.isEmpty, "\(output)")
        #expect(!output.contains("| comment_body |"), "no comment sent alone: \(output)")
        // Every example mapping's push is one a phone shows as meant (docs/emulator.md, "Device notes").
        #expect(!output.contains("== device notes"), "\(output)")
    }
}
