import Dates
import Mapping
import Preferences

/// What the per-user rules (docs/rules.md) add to mapping a push to a user: the same event
/// rendered to a user's two devices by a mapping without rules and by one with a category and
/// quiet hours, against a user who muted other categories and lives in Europe/Berlin. The
/// user's record is in memory: the registry read is the same with or without rules (its cost is
/// the registry benchmark's). Rounds alternate, and each figure is the median of its rounds.
enum RulesBenchmark {
    static func mapping(rules: Bool) -> String {
        """
        version: 1
        event: {type: /type, id: /id}
        events:
          message.received:
            target: {user: {field: /recipient/id}}
        \(rules ? "    category: social\n    quiet_hours: {from: \"22:00\", to: \"07:30\"}" : "")
            title: {key: new_message_title, args: [{field: /sender/name}]}
            body: {key: new_message_body, args: [{field: /unread_count}, {field: /sender/name}]}
            collapse_key: {field: /chat_id}
            replace_id: {from: event_id}
        """
    }

    static func run(events: Int, rounds: Int = 5) throws -> [(name: String, value: Double)] {
        let off = try MappingSet.load(files: [("off.yaml", mapping(rules: false))])
        let on = try MappingSet.load(files: [("on.yaml", mapping(rules: true))])
        guard let berlin = TimeZoneDatabase.shared.zone(named: "Europe/Berlin") else { throw BenchError("no tzdata: Europe/Berlin") }
        let record = UserRecord(
            devices: [
                UserDevice(kind: .token, id: "bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1-JzmJ6PrqB1xq3Yb9e0", platform: "android", muted: ["news"]),
                UserDevice(kind: .fid, id: "cU3ySiHNQ0uhlD8n3DkBcZ", platform: "ios"),
            ],
            preferences: UserPreferences(choices: UserChoices(timeZone: "Europe/Berlin", muted: ["marketing", "news.digest"]), zone: berlin))
        let users: MappingSet.UserLookup = { _ in record }
        // 2027-01-15T12:00:00Z: 13:00 in Berlin, outside the quiet hours, so both render and send.
        let now: Int64 = 1_800_014_400
        func round(_ set: MappingSet) throws -> Double {
            var bytes = 0
            let start = ContinuousClock.now
            for i in 0..<events {
                let record = EventRecord(value: MappingBenchmark.userEvent, topic: "events", partition: 0, offset: Int64(i))
                guard case .success(let rendered) = set.render(record, now: now, users: users), rendered.messages.count == 2 else {
                    throw BenchError("mapping failed")
                }
                for m in rendered.messages { bytes += m.requestBody().count }
            }
            precondition(bytes > 0)
            return KafkaBenchmark.seconds(ContinuousClock.now - start) * 1e6 / Double(events)
        }
        _ = try (round(off), round(on))  // warm-up
        var (offs, ons): ([Double], [Double]) = ([], [])
        for _ in 0..<max(rounds, 1) {
            offs.append(try round(off))
            ons.append(try round(on))
        }
        let (a, b) = (offs.sorted()[offs.count / 2], ons.sorted()[ons.count / 2])
        return [("rules_off_microseconds_per_event", a), ("rules_on_microseconds_per_event", b), ("rules_added_microseconds_per_event", b - a)]
    }
}
