import Dates
import Mapping
import Preferences

/// What a push to a user costs to map, and what the per-user rules (docs/rules.md) add: the
/// same event rendered to a user's one device (an Android token) and two (and an iOS FID), by a
/// mapping without rules and by one with a category and quiet hours, against a user who muted
/// other categories and lives in Europe/Berlin. The user's record is in memory: the registry
/// read is the same with or without rules (its cost is the registry benchmark's). Rounds
/// alternate, and each figure is the median of its rounds.
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

    /// One figure's setup: rules or not, one device or two.
    struct Case {
        var name: String
        var rules: Bool
        var devices: Int
    }

    static let cases = [
        Case(name: "rules_off", rules: false, devices: 2), Case(name: "rules_on", rules: true, devices: 2),
        Case(name: "rules_off_one_device", rules: false, devices: 1), Case(name: "rules_on_one_device", rules: true, devices: 1),
    ]

    /// - Parameter only: the name of one case to run (for counting instructions); nil: all.
    static func run(events: Int, rounds: Int = 5, only: String? = nil) throws -> [(name: String, value: Double)] {
        guard let berlin = TimeZoneDatabase.shared.zone(named: "Europe/Berlin") else { throw BenchError("no tzdata: Europe/Berlin") }
        let devices = [
            UserDevice(kind: .token, id: "bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1-JzmJ6PrqB1xq3Yb9e0", platform: "android", muted: ["news"]),
            UserDevice(kind: .fid, id: "cU3ySiHNQ0uhlD8n3DkBcZ", platform: "ios"),
        ]
        let preferences = UserPreferences(choices: UserChoices(timeZone: "Europe/Berlin", muted: ["marketing", "news.digest"]), zone: berlin)
        let chosen = cases.filter { only == nil || $0.name == only }
        guard !chosen.isEmpty else { throw BenchError("no such case: \(only ?? "")") }
        let runs = try chosen.map { c in
            let set = try MappingSet.load(files: [("\(c.name).yaml", mapping(rules: c.rules))])
            let record = UserRecord(devices: Array(devices.prefix(c.devices)), preferences: preferences)
            return (c, set, { (_: String) in record } as MappingSet.UserLookup)
        }
        // 2027-01-15T12:00:00Z: 13:00 in Berlin, outside the quiet hours, so every device renders and sends.
        let now: Int64 = 1_800_014_400
        func round(_ set: MappingSet, _ users: @escaping MappingSet.UserLookup, devices: Int) throws -> Double {
            var bytes = 0
            let start = ContinuousClock.now
            for i in 0..<events {
                let record = EventRecord(value: MappingBenchmark.userEvent, topic: "events", partition: 0, offset: Int64(i))
                guard case .success(let rendered) = set.render(record, now: now, users: users), rendered.messages.count == devices else {
                    throw BenchError("mapping failed")
                }
                for m in rendered.messages { bytes += m.requestBody().count }
            }
            precondition(bytes > 0)
            return KafkaBenchmark.seconds(ContinuousClock.now - start) * 1e6 / Double(events)
        }
        for (c, set, users) in runs { _ = try round(set, users, devices: c.devices) }  // warm-up
        var times = Array(repeating: [Double](), count: runs.count)
        for _ in 0..<rounds {
            for (i, (c, set, users)) in runs.enumerated() { times[i].append(try round(set, users, devices: c.devices)) }
        }
        guard rounds > 0 else { return [] }
        let medians = times.map { $0.sorted()[$0.count / 2] }
        var figures = zip(runs, medians).map { run, median in ("\(run.0.name)_microseconds_per_event", median) }
        if only == nil { figures.append(("rules_added_microseconds_per_event", medians[1] - medians[0])) }
        return figures
    }
}
