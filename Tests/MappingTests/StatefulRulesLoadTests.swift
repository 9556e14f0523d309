import Mapping
import Testing

/// `cap` and `dedup` (docs/rules.md): what loads with the rules engine, what is refused at its
/// line, and the refusal of both without the engine.
@Suite("Stateful rules: cap and dedup in mapping files")
struct StatefulRulesLoadTests {
    static func yaml(_ rules: String, target: String = "{user: {field: /to}}") -> String {
        UserRulesTests.yaml(rules, target: target)
    }

    func loaded(_ yaml: String) throws -> StatefulRules? {
        try MappingSet.load(files: [("test.yaml", yaml)], statefulRules: true).mappings["chat"]?.stateful
    }

    func errors(_ yaml: String, statefulRules: Bool = true) -> [String] {
        do {
            _ = try MappingSet.load(files: [("test.yaml", yaml)], statefulRules: statefulRules)
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    @Test("with the rules engine: a cap keeps its key's order, over defaults to skip; dedup: true takes max_age, else a day")
    func loads() throws {
        #expect(
            try loaded(Self.yaml("category: social\ncap: {max: 3, per: 1h, by: [user, category]}\ndedup: {window: 2d}"))
                == StatefulRules(cap: .init(max: 3, per: 3_600, by: [.user, .category]), dedupWindow: 172_800))
        #expect(try loaded(Self.yaml("dedup: true\nmax_age: 10m"))?.dedupWindow == 600)
        #expect(try loaded(Self.yaml("dedup: true"))?.dedupWindow == 86_400)
        #expect(try loaded(Self.yaml("dedup: false"))?.isEmpty == true)
        #expect(
            try loaded(Self.yaml("cap: {max: 1, per: 1d, by: [device], over: dead-letter}", target: "{fid: {field: /fid}}"))?.cap
                == .init(max: 1, per: 86_400, by: [.device], over: .deadLetter))
        #expect(try loaded(Self.yaml("dedup: true", target: "{fids: {field: /fids}}"))?.dedupWindow == 86_400, "dedup needs no user")
    }

    @Test("what cannot be counted exactly, or says nothing, is refused at its line")
    func refused() {
        #expect(
            errors(Self.yaml("cap: {max: 0, per: 30s, by: [user, user]}")) == [
                "test.yaml:6:16: error: cap.max must be a whole number from 1 to 1000\n    hint: how many pushes per window",
                "test.yaml:6:24: error: cap.per \"30s\" is not a duration from 1m to 30d\n    hint: write 15m, 1h, 1d",
                "test.yaml:6:40: error: cap.by names user twice",
            ])
        #expect(
            errors(Self.yaml("cap: {max: 2, per: 1h, by: [mapping, category]}")) == [
                "test.yaml:6:32: error: cap.by must count per user or per device\n    hint: add user (or device): without it every user would share one count",
                "test.yaml:6:32: error: cap.by counts per category, and this mapping has no `category`\n    hint: add `category: …`, or leave category out of by",
            ])
        #expect(
            errors(Self.yaml("cap: {max: 2, per: 1h, by: [user]}", target: "{fid: {field: /fid}}")) == [
                "test.yaml:6:32: error: cap.by counts per user, and this push does not say whose it is\n    hint: add `user: {field: /user_id}`, or target the user"
            ])
        #expect(
            errors(Self.yaml("cap: {max: 2, per: 1h, by: [device]}", target: "{fids: {field: /fids}}")) == [
                "test.yaml:6:10: error: a cap counts one user's or one device's pushes, and this push goes to a list of devices\n    hint: add `user: {field: …}`"
            ])
        #expect(
            errors(Self.yaml("cap: {max: 2, per: 1h, by: [user], over: drop}")).first?.contains("cap.over must be `skip` or `dead-letter`") == true)
        #expect(errors(Self.yaml("cap: {max: 2, by: [user]}")).first?.contains("cap has no `per`") == true)
        #expect(errors(Self.yaml("dedup: {window: 60d}")).first?.contains("dedup.window \"60d\" is not a duration from 1m to 30d") == true)
        #expect(errors(Self.yaml("dedup: always")).first?.contains("dedup must be `true` or `{window: 24h}`") == true)
    }

    @Test("critical with a cap loads with a warning: critical bypasses caps")
    func criticalWarning() throws {
        let set = try MappingSet.load(
            files: [("test.yaml", Self.yaml("category: security\ncritical: true\ncap: {max: 1, per: 1h, by: [user]}"))], statefulRules: true)
        #expect(set.warnings.map(\.message).contains("critical bypasses caps: this cap never withholds"))
    }

    @Test("loaded without the rules engine, each is refused after its checks, naming why")
    func refusedWithoutEngine() {
        #expect(
            errors(Self.yaml("cap: {max: 3, per: 1h, by: [user]}\ndedup: true"), statefulRules: false) == [
                "test.yaml:6:10: error: `cap` needs the rules engine's shared state, which only `pushbridge run`'s workers keep\n    hint: load these mappings with the rules engine (MappingSet.load(files:statefulRules: true)); docs/rules.md",
                "test.yaml:7:12: error: `dedup` needs the rules engine's shared state, which only `pushbridge run`'s workers keep\n    hint: load these mappings with the rules engine (MappingSet.load(files:statefulRules: true)); docs/rules.md",
            ])
    }
}
