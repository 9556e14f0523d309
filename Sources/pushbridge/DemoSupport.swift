import FCM
import FCMEmulator
import Foundation
import JSON
import Jobs
import Kafka
import Localization
import Logging
import Mapping
import MappingLocalization
import Operations

/// One event the demo produces.
struct DemoEvent {
    var key: [UInt8]?
    var value: [UInt8]
    var headers: [KafkaHeader] = []
}

enum DemoEvents {
    /// The example events, one of them again (a producer's retry), then events that show the
    /// failure paths, then `extra` generated ones.
    static func load(directory: String, extra: Int) throws -> [DemoEvent] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted()
        var events: [DemoEvent] = []
        var retried: DemoEvent?
        for file in files {
            guard let data = FileManager.default.contents(atPath: "\(directory)/\(file)") else { continue }
            var headers: [KafkaHeader] = []
            if file.contains("cloudevent") { headers.append(KafkaHeader(name: "content-type", string: "application/cloudevents+json")) }
            // One Live Activity's events share a key (`activity-o-81.1-….json`: `activity-o-81`), as a
            // producer keys them by the activity: one partition, so they are sent in order.
            let key = file.hasPrefix("activity-") ? String(file.prefix { $0 != "." }) : file
            events.append(DemoEvent(key: Array(key.utf8), value: Array(data), headers: headers))
            if file == "post-liked.user-42.json" { retried = events.last }
        }
        // A producer's retry: user-42's like written again, its event ID the same → withheld as a
        // duplicate (post.liked's cap implies dedup over its hour). Under the cap, so whichever
        // copy is decided first is sent: the outcome does not depend on the order.
        if let retried { events.append(retried) }
        // A dead token: the emulator answers UNREGISTERED → a token-invalidation record.
        events.append(
            DemoEvent(
                key: Array("zoe".utf8),
                value: Array(#"{"type":"user.welcome","id":"evt-2001","user":{"first_name":"Zoe","fcm_token":"dead-token-of-zoe"}}"#.utf8)))
        // Not JSON → a dead-letter record; every other event is still delivered.
        events.append(DemoEvent(key: Array("broken".utf8), value: Array(#"{"type":"user.welcome","user":{"first_name":"#.utf8)))
        // A required field missing → a dead-letter record naming it.
        events.append(
            DemoEvent(key: Array("no-token".utf8), value: Array(#"{"type":"user.welcome","id":"evt-2002","user":{"first_name":"Yan"}}"#.utf8)))
        // No mapping for this type → skipped (unknown_event_types: skip).
        events.append(DemoEvent(key: Array("other".utf8), value: Array(#"{"type":"user.logged_in","id":"evt-2003"}"#.utf8)))
        for i in 0..<extra {
            let value = #"{"type":"user.welcome","id":"gen-\#(i)","user":{"first_name":"User \#(i)","fcm_token":"generated-token-\#(i)"}}"#
            events.append(DemoEvent(key: Array("gen-\(i)".utf8), value: Array(value.utf8)))
        }
        return events
    }

    /// `   order-status-shipped.json: variant: shipped (/status = "shipped")` for each event whose
    /// type has variants, `   order-paid.json: pushes: buyer, seller` for one with pushes: what
    /// the worker is about to send, rendered here as `render` does.
    static func printVariants(_ events: [DemoEvent], mappings: MappingSet) {
        for event in events {
            let record = EventRecord(value: event.value, headers: event.headers.map { ($0.name, $0.value) })
            let line: String
            switch mappings.render(record, maxAge: .ignore) {
            case .success(let rendered):
                let pushes = rendered.messages.compactMap(\.push).map { "\($0.name)\($0.variant.map { " (variant \($0))" } ?? "")" }
                if !pushes.isEmpty {
                    line = "pushes: " + pushes.joined(separator: ", ")
                } else if let variant = rendered.variant {
                    line = variant.summary
                } else {
                    continue
                }
            case .failure(.noVariant(let none)): line = none.summary
            case .failure: continue
            }
            Swift.print("   \(String(decoding: event.key ?? [], as: UTF8.self)): \(line)")
        }
    }
}

/// The FCM emulator with a fresh service account and CA, and a client configuration for it.
struct DemoFCM {
    let emulator: FCMEmulator
    let account: ServiceAccount
    let directory: String
    let caFile: String

    static func start() async throws -> DemoFCM {
        let key = try EmulatorAccount(name: "pushbridge-demo")
        var configuration = FCMEmulator.Configuration(accounts: [key.email: key.privateKeyPEM])
        configuration.faults.tokenPrefixes = ["dead-": "UNREGISTERED"]
        let emulator = try await FCMEmulator.start(configuration)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-demo-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let caFile = "\(directory)/ca.pem"
        try emulator.tls.caPEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        let account = try ServiceAccount(json: Data(key.keyFileJSON(tokenURI: emulator.tokenURI)))
        return DemoFCM(emulator: emulator, account: account, directory: directory, caFile: caFile)
    }

    var clientConfiguration: FCMClient.Configuration {
        var c = FCMClient.Configuration(serviceAccount: account)
        c.baseURL = emulator.baseURL
        c.caFile = caFile
        return c
    }
}

enum DemoResources {
    static func catalogs(examples: String) -> [ResourceCatalog] {
        var catalogs: [ResourceCatalog] = []
        let android = "\(examples)/resources/android/res"
        let ios = "\(examples)/resources/ios"
        if FileManager.default.fileExists(atPath: android) {
            catalogs.append(ResourceCatalog.loadAndroid(directories: [android], defaultLocale: "en"))
        }
        if FileManager.default.fileExists(atPath: ios) { catalogs.append(ResourceCatalog.loadApple(paths: [ios], developmentLanguage: nil)) }
        return catalogs
    }
}

/// What the demo prints at the end.
struct DemoReport {
    /// The outcome records written, in order.
    static func outcomes(_ written: [KafkaProducerRecord], topics: DemoTopics) -> [JSONValue] {
        written.filter { $0.topic == topics.outcomes }.compactMap { try? JSONParser.parse($0.value) }
    }

    /// The outcome records of pushes that went to the timer topic.
    static func deferred(_ written: [KafkaProducerRecord], topics: DemoTopics) -> [JSONValue] {
        outcomes(written, topics: topics).filter { $0["result"] == .string("deferred") }
    }

    var messages: [RecordedMessage]
    var attempts: [RecordedAttempt]
    var written: [KafkaProducerRecord]
    var topics: DemoTopics
    var committed: [TopicPartition: Int64]
    var events: Int
    var elapsed: Duration
    /// Print only the first this many pushes one by one (the rest are generated load).
    var printIndividually: Int
    /// Event types with `digest`: their deferred outcome records are digest windows', not timers'.
    var digestTypes: Set<String> = []

    func print(catalogs: [ResourceCatalog], locales: [String]) {
        let sent = messages.filter { !$0.validateOnly }
        Swift.print("\n== pushes the FCM emulator accepted")
        for m in sent.prefix(printIndividually) {
            let target: String
            if let token = m.token {
                target = "token …" + String(token.suffix(6))
            } else if let fid = m.fid {
                target = "fid …" + String(fid.suffix(6))
            } else if let topic = m.topic {
                target = "topic " + topic
            } else {
                target = "condition " + (m.condition ?? "?")
            }
            Swift.print("\n✓ \(target)  \(m.name)")
            let pushes = LocKeyUses.pushes(m.message)
            if let apns = m.message["apns"], apns["live_activity_token"] != nil {
                // A Live Activity push: the APNs payload the phone gets, then its alert, if any.
                let priority = apns["headers"]?["apns-priority"]?.stringValue ?? "?"
                Swift.print(
                    "  Live Activity, apns-priority \(priority): " + String(decoding: JSONWriter.write(apns["payload"] ?? .null), as: UTF8.self))
                if pushes.isEmpty { continue }
            }
            if let web = LocKeyUses.webTexts(m.message) {
                Swift.print("  web: " + [web.title, web.body].compactMap { $0 }.joined(separator: " — "))
            }
            if pushes.isEmpty, LocKeyUses.webTexts(m.message) != nil {
                // A web push only: its text is above.
            } else if pushes.isEmpty {
                Swift.print("  silent push, data: \(String(decoding: JSONWriter.write(m.message["data"] ?? .null), as: UTF8.self))")
            } else if catalogs.isEmpty {
                for p in pushes { Swift.print("  \(p.platform): \(p)") }
            } else {
                let table = Previewer.table(Previewer.preview(pushes, locales: locales, catalogs: catalogs))
                Swift.print(table.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n"), terminator: "")
            }
        }
        if sent.count > printIndividually { Swift.print("\n… and \(sent.count - printIndividually) more") }
        // What FCM accepted but a phone would ignore (docs/emulator.md, "Device notes"): none expected.
        let noted = sent.filter { !$0.deviceNotes.isEmpty }
        if !noted.isEmpty {
            Swift.print("\n== device notes: \(noted.count) accepted pushes hold what a device would ignore")
            for m in noted {
                for n in m.deviceNotes { Swift.print("⚠ \(m.name) \(n.field): \(n.note)") }
            }
        }

        let dead = written.filter { $0.topic == topics.deadLetter }
        Swift.print("\n== dead-letter records (\(topics.deadLetter))")
        for r in dead {
            func h(_ n: String) -> String { r.headers.first { $0.name == n }?.stringValue ?? "-" }
            Swift.print(
                "✗ \(h("pushbridge-source-topic"))/\(h("pushbridge-source-partition"))/\(h("pushbridge-source-offset")) [\(h("pushbridge-reason-code"))] \(h("pushbridge-reason"))"
            )
        }
        let invalid = written.filter { $0.topic == topics.invalidations }
        Swift.print("\n== token-invalidation records (\(topics.invalidations))")
        for r in invalid { Swift.print("⊘ \(String(decoding: r.value, as: UTF8.self))") }
        // Outcome records (topics.outcomes) of pushes a user's rule withheld (docs/rules.md).
        let withheld = Self.outcomes(written, topics: topics).filter { $0["result"] == .string("withheld") }
        Swift.print("\n== withheld by the users' rules (outcome records, \(topics.outcomes))")
        for o in withheld {
            Swift.print(
                "⏸ \(o["event_type"]?.stringValue ?? "-") to \(o["user"]?.stringValue ?? "-") [\(o["reason_code"]?.stringValue ?? "-")] \(o["reason"]?.stringValue ?? "")"
                    + (o["event_id"]?.stringValue.map { " (\($0))" } ?? "")
            )
        }

        let waiting = Self.deferred(written, topics: topics)
        let digested = waiting.filter { digestTypes.contains($0["event_type"]?.stringValue ?? "") }
        let deferred = waiting.filter { !digestTypes.contains($0["event_type"]?.stringValue ?? "") }
        // One window per key and end: its members' outcome records share the due time.
        for (due, members) in Dictionary(grouping: digested, by: { $0["due"]?.stringValue ?? "-" }).sorted(by: { $0.key < $1.key }) {
            Swift.print("\n== digested: held by the rules stage until the window's end, then one push (outcome records, \(topics.outcomes))")
            let sources = Set(members.compactMap { $0["source"]?.stringValue })
            let sent = Self.outcomes(written, topics: topics).filter {
                sources.contains($0["source"]?.stringValue ?? "") && $0["result"] != .string("deferred")
            }
            let ids = members.compactMap { $0["event_id"]?.stringValue }.joined(separator: ", ")
            Swift.print(
                "⧉ \(members.first?["event_type"]?.stringValue ?? "-") (\(ids)) until \(due): \(sent.count) push\(sent.count == 1 ? "" : "es") "
                    + "\(sent.first?["result"]?.stringValue ?? "not sent yet") at \(sent.first?["time"]?.stringValue ?? "-")")
        }
        if !deferred.isEmpty {
            Swift.print("\n== deferred: waited in the timer topic, then sent (outcome records, \(topics.outcomes))")
            for o in deferred {
                let source = o["source"]?.stringValue
                let sent = Self.outcomes(written, topics: topics).last { $0["source"]?.stringValue == source && $0["result"] != .string("deferred") }
                Swift.print(
                    "⏲ \(o["event_type"]?.stringValue ?? "-") (\(o["event_id"]?.stringValue ?? "-")) due \(o["due"]?.stringValue ?? "-"): "
                        + "\(sent?["result"]?.stringValue ?? "not sent yet") at \(sent?["time"]?.stringValue ?? "-")")
            }
        }

        let board = LiveActivityBoard(messages)
        if !board.activities.isEmpty {
            // The emulator's device model: what the phone's Live Activities show now (docs/emulator.md).
            Swift.print("\n== Live Activities as the phone shows them (by Apple token)")
            for (token, a) in board.activities.sorted(by: { $0.key < $1.key }) {
                let state = a.contentState.map { String(decoding: JSONWriter.write($0), as: UTF8.self) } ?? "-"
                Swift.print("◆ …\(token.suffix(6)) \(a.event), timestamp \(a.timestamp): \(state) (\(a.applied) applied, \(a.ignored) ignored)")
            }
        }

        Swift.print("\n== committed offsets (group pushbridge-demo)")
        for (p, o) in committed.sorted(by: { $0.key.partition < $1.key.partition }) { Swift.print("   \(p): \(o)") }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var byStatus: [Int: Int] = [:]
        for a in attempts { byStatus[a.status, default: 0] += 1 }
        let statuses = byStatus.sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }.joined(separator: ", ")
        Swift.print("\nFCM requests: \(attempts.count) (\(statuses))")
        Swift.print(
            "\(events) events → \(sent.count) pushes accepted, \(dead.count) dead-lettered, \(invalid.count) token invalidations, in \(String(format: "%.2f", seconds)) s"
        )
    }
}

/// The demo's device registry: the users' records of examples/registry (`user-*.json`) and
/// user-43's, on its topic, read by a follower into a store in the demo's folder, as a worker's
/// (``WorkerRegistry``).
enum DemoRegistry {
    /// The app (project) the example devices name: the demo's one project is called so.
    static let app = "consumer"

    /// User-43's quiet hours: an hour before now to an hour after, in UTC, so that the demo shows
    /// a push withheld by them whenever it runs.
    static let quietHoursNow: (from: String, to: String) = {
        let minute = Int(Date().timeIntervalSince1970) % 86_400 / 60
        func clock(_ m: Int) -> String { String(format: "%02d:%02d", (m + 1_440) % 1_440 / 60, (m + 1_440) % 60) }
        return (clock(minute - 60), clock(minute + 60))
    }()

    static func load(
        examples: String, topic: String, producer: KafkaProducer, bootstrapServers: String, directory: String, logger: Logger
    ) async throws -> WorkerRegistry {
        let folder = "\(examples)/registry"
        for file in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() where file.hasPrefix("user-") && file.hasSuffix(".json") {
            let record = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(file)"))
            _ = try await producer.send(KafkaProducerRecord(topic: topic, key: Array(file.dropLast(5).utf8), value: Array(record)))
        }
        let user43 =
            #"{"devices": [{"token": "fake-token-of-user-43", "platform": "android", "app": "consumer"}], "time_zone": "UTC", "quiet_hours": {"from": "\#(quietHoursNow.from)", "to": "\#(quietHoursNow.to)"}}"#
        _ = try await producer.send(KafkaProducerRecord(topic: topic, key: Array("user-43".utf8), value: Array(user43.utf8)))
        return try WorkerRegistry(
            topic: topic, path: "\(directory)/registry.sqlite", cacheMegabytes: PushbridgeConfig().registry.cacheMegabytes,
            brokers: [bootstrapServers], properties: [:], logger: logger)
    }
}
