import Mapping
import Testing

/// `max_age`, `occurred_at` (once `event_time`), `too_old` and `ttl: remaining` as mapping files spell them, and every
/// mistake named at its file:line:column.
@Suite("max_age and ttl: remaining: loading and load-time errors")
struct MaxAgeLoadTests {
    /// An event type with `extra` lines (indented under it) after its target and body.
    static func yaml(_ extra: String) -> String {
        "version: 1\nevents:\n  driver.arrived:\n    target: {token: {field: /token}}\n    body: {key: driver_here}\n" + extra
    }

    @Test("every option, and the defaults: the Kafka timestamp, skip")
    func options() throws {
        let full = try load(
            Self.yaml("    max_age: 10m\n    occurred_at: {field: /occurred_at}\n    too_old: dead-letter\n    ttl: remaining\n"))
        let m = try #require(full.mappings["driver.arrived"])
        #expect(m.maxAge == MaxAge(seconds: 600, eventTime: .field(JSONPointer("/occurred_at")!, unit: .milliseconds), whenTooOld: .deadLetter))
        #expect(m.ttl == .remaining && m.ttlSeconds == nil)
        let seconds = try load(Self.yaml("    max_age: 90\n    occurred_at: {field: /ts, unit: s}\n"))
        #expect(seconds.mappings["driver.arrived"]?.maxAge?.eventTime == .field(JSONPointer("/ts")!, unit: .seconds))
        let plain = try load(Self.yaml("    max_age: 1h\n    ttl: 30m\n"))
        #expect(plain.mappings["driver.arrived"]?.maxAge == MaxAge(seconds: 3600, eventTime: .recordTimestamp, whenTooOld: .skip))
        #expect(plain.mappings["driver.arrived"]?.ttl == .seconds(1800))
        #expect(plain.warnings.isEmpty)
    }

    @Test("`ttl: remaining`, `occurred_at` and `too_old` need a max_age")
    func needMaxAge() {
        let e = loadErrors(Self.yaml("    ttl: remaining\n    occurred_at: {field: /at}\n    too_old: skip\n"))
        #expect(
            e.map(\.description) == [
                "test.yaml:7:18: error: `occurred_at` needs `max_age`\n    hint: add `max_age:` (e.g. 10m), the age past which an event is not sent",
                "test.yaml:8:14: error: `too_old` needs `max_age`\n    hint: add `max_age:` (e.g. 10m), the age past which an event is not sent",
                "test.yaml:6:10: error: `ttl: remaining` is what is left of `max_age`, and there is none\n    hint: add `max_age:` (e.g. 10m), or give the ttl as a duration",
            ])
    }

    @Test("event_time, as occurred_at was called, loads the same with a warning naming the new key; both given is an error")
    func eventTimeAlias() throws {
        let old = try load(Self.yaml("    max_age: 10m\n    event_time: {field: /at, unit: s}\n"))
        let new = try load(Self.yaml("    max_age: 10m\n    occurred_at: {field: /at, unit: s}\n"))
        #expect(old.mappings["driver.arrived"]?.maxAge == new.mappings["driver.arrived"]?.maxAge)
        #expect(new.warnings.isEmpty)
        #expect(
            old.warnings.map(\.description) == [
                "test.yaml:7:17: warning: `event_time` is now `occurred_at`: FCM's own event_time is the time an Android notification shows\n    hint: write `occurred_at:` with the same value"
            ])
        let both = loadErrors(Self.yaml("    max_age: 10m\n    occurred_at: {field: /at}\n    event_time: {field: /at}\n"))
        #expect(both.map { "\($0.line):\($0.column) \($0.message)" } == ["8:17 `event_time` and `occurred_at` are both given"])
        let alone = loadErrors(Self.yaml("    event_time: {field: /at}\n"))
        #expect(alone.map(\.message) == ["`event_time` needs `max_age`"])
    }

    @Test("max_age must be a duration over 0", arguments: ["0", "0s", "soon", "-5m", "10 m"])
    func badMaxAge(value: String) {
        let e = loadErrors(Self.yaml("    max_age: \(value)\n"))
        #expect(e.count == 1)
        #expect(e.first?.description.hasPrefix("test.yaml:6:14: error: max_age \"\(value)\" is not a duration over 0") == true, "\(e)")
    }

    @Test("too_old is skip or dead-letter; occurred_at is {field: /pointer} with unit ms or s")
    func badValues() {
        let tooOld = loadErrors(Self.yaml("    max_age: 10m\n    too_old: drop\n"))
        #expect(tooOld.map { "\($0.line):\($0.column) \($0.message)" } == ["7:14 too_old must be `skip` or `dead-letter`"])
        let bare = loadErrors(Self.yaml("    max_age: 10m\n    occurred_at: /occurred_at\n"))
        #expect(bare.map { "\($0.line):\($0.column) \($0.message)" } == ["7:18 `occurred_at` must be `{field: /pointer}`"])
        #expect(bare.first?.hint?.contains("unit: s") == true)
        let unit = loadErrors(Self.yaml("    max_age: 10m\n    occurred_at: {field: /at, unit: us}\n"))
        #expect(unit.map { "\($0.line):\($0.column) \($0.message)" } == ["7:37 occurred_at unit must be `ms` or `s`"])
        let extra = loadErrors(Self.yaml("    max_age: 10m\n    occurred_at: {field: /at, default: now}\n"))
        #expect(extra.first?.message == "unknown field `default` in `occurred_at`")
        let pointer = loadErrors(Self.yaml("    max_age: 10m\n    occurred_at: {field: at}\n"))
        #expect(pointer.first?.message == "\"at\" is not a JSON Pointer" && pointer.first?.line == 7)
    }

    @Test("with ttl: remaining, max_age is at most FCM's 4 weeks")
    func remainingOverFourWeeks() throws {
        let e = loadErrors(Self.yaml("    max_age: 5w\n    ttl: remaining\n"))
        #expect(
            e.map(\.description) == [
                "test.yaml:6:14: error: max_age 5w is over FCM's maximum ttl of 4 weeks (2419200s), and `ttl: remaining` starts from it\n    hint: use at most 4w, or a ttl of its own"
            ])
        // Without it, a long max_age is fine: it only decides what is sent.
        #expect(try load(Self.yaml("    max_age: 8w\n")).mappings["driver.arrived"]?.maxAge?.seconds == 8 * 604_800)
    }

    @Test("a fixed ttl that outlives max_age loads, with a warning at the ttl")
    func ttlOutlivesMaxAge() throws {
        let set = try load(Self.yaml("    max_age: 10m\n    ttl: 1h\n"))
        #expect(
            set.warnings.map(\.description) == [
                "test.yaml:7:10: warning: ttl 1h outlives max_age 10m: a push sent in time can still reach a phone that comes online up to 1h later\n    hint: `ttl: remaining` ends the push when max_age runs out"
            ])
    }

    @Test("validate's summary line says what max_age does")
    func summary() throws {
        let set = try load(
            Self.yaml("    max_age: 10m\n    occurred_at: {field: /at, unit: s}\n    too_old: dead-letter\n    ttl: remaining\n"))
        #expect(
            set.mappings["driver.arrived"]?.maxAgeSummary
                == "driver.arrived: sent only within 10m of /at (epoch seconds); older: dead-lettered (too_old); ttl: what is left of the 10m")
        let plain = try load(Self.yaml("    max_age: 5400\n"))
        #expect(
            plain.mappings["driver.arrived"]?.maxAgeSummary
                == "driver.arrived: sent only within 1h30m of the Kafka timestamp; older: skipped; ttl: FCM's default")
    }
}
