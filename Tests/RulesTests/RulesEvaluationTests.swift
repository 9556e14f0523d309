import Rules
import Testing

@Suite("Caps and dedup over a RulesState")
struct RulesEvaluationTests {
    let policy = RulesPolicy(sendLimit: 10)
    let cap = CapRule(max: 2, per: 1_000, by: [.user, .category])

    func subject(user: String = "u", category: String? = "social", mapping: String = "chat", devices: [String] = ["fid:a"]) -> CapSubject {
        CapSubject(user: user, category: category, mapping: mapping, devices: devices.map { DeviceKey(target: $0) })
    }

    func n(_ id: String) -> NotificationID { NotificationID(eventID: id, mapping: "chat", subject: "u") }

    func record(
        _ state: inout InMemoryRulesState, _ id: String, _ status: FactStatus, at: Int64, subject: CapSubject? = nil, targets: [String] = ["fid:a"]
    ) {
        let s = subject ?? self.subject()
        state.apply(
            .notification(NotificationFact(notification: n(id), status: .reserved, attempt: 1, at: at, expires: at + 5_000, owner: "w", subject: s)))
        guard status != .reserved else { return }
        state.apply(
            .notification(
                NotificationFact(
                    notification: n(id), status: status, attempt: 1, at: at, expires: at + 5_000, owner: "w",
                    devices: targets.map { DevicePushID(notification: n(id), target: $0) })))
    }

    func verdict(
        _ id: String, now: Int64, _ state: InMemoryRulesState, subject: CapSubject? = nil, inFlight: InFlightTable = InFlightTable()
    ) -> CapVerdict {
        RulesEvaluation.cap(cap, notification: n(id), subject: subject ?? self.subject(), now: now, state: state, inFlight: inFlight, policy: policy)
    }

    @Test("the boundary: max - 1 acknowledged lets one through, max withholds; the window slides")
    func boundary() {
        var state = InMemoryRulesState()
        record(&state, "a", .sent, at: 100)
        #expect(verdict("c", now: 500, state) == .allow)
        record(&state, "b", .sent, at: 400)
        let key = cap.keys(of: subject())[0]
        #expect(verdict("c", now: 500, state) == .withhold(key: key, counted: 2))
        #expect(verdict("c", now: 1_099, state) == .withhold(key: key, counted: 2))
        #expect(verdict("c", now: 1_100, state) == .allow, "a at 100 leaves the window (1100 − 1000, 1100]")
    }

    @Test("in doubt counts, released does not, an unresolved reservation counts until at + sendLimit")
    func statuses() {
        var state = InMemoryRulesState()
        record(&state, "a", .inDoubt, at: 100)
        record(&state, "b", .released, at: 100)
        #expect(verdict("c", now: 200, state) == .allow)
        record(&state, "d", .reserved, at: 150)
        #expect(verdict("c", now: 200, state) != .allow)
        let one = CapRule(max: 1, per: 1_000, by: [.user, .category])
        func verdictOfOne(_ now: Int64) -> CapVerdict {
            RulesEvaluation.cap(one, notification: n("c"), subject: subject(), now: now, state: state, inFlight: InFlightTable(), policy: policy)
        }
        #expect(verdictOfOne(1_159) != .allow, "d, reserved at 150, counts until 160")
        #expect(verdictOfOne(1_160) == .allow)
    }

    @Test("a notification already counted is not counted against itself, but a resend is checked against the others")
    func alreadyCounted() {
        var state = InMemoryRulesState()
        record(&state, "a", .inDoubt, at: 100)
        record(&state, "b", .sent, at: 120)
        #expect(verdict("a", now: 200, state) == .allow, "a's own in-doubt attempt does not fill its cap")
        record(&state, "c", .sent, at: 150)
        let key = cap.keys(of: subject())[0]
        #expect(verdict("a", now: 1_110, state) == .withhold(key: key, counted: 2), "a resend lands in a window a has left")
    }

    @Test("in flight here: counted plus in flight at max waits; a settled max withholds anyway")
    func inFlight() {
        var state = InMemoryRulesState()
        record(&state, "a", .sent, at: 100)
        var table = InFlightTable()
        let key = cap.keys(of: subject())[0]
        let begun = table.begin(n("b"), keys: [key])
        #expect(begun)
        record(&state, "b", .reserved, at: 150)  // read back: in the state and in flight
        #expect(verdict("c", now: 200, state, inFlight: table) == .wait(on: [n("b")]))
        _ = table.finish(n("b"))
        record(&state, "b", .released, at: 150)
        #expect(verdict("c", now: 200, state, inFlight: table) == .allow)
    }

    @Test("keys: shared across mappings, per category (none is its own value), one per device")
    func keys() {
        var state = InMemoryRulesState()
        record(&state, "a", .sent, at: 100, subject: subject(mapping: "offer"))
        record(&state, "b", .sent, at: 100, subject: subject(category: nil))
        #expect(verdict("c", now: 200, state) == .allow, "one of category social (from another mapping), one of none")
        record(&state, "d", .sent, at: 100, subject: subject(mapping: "other"))
        #expect(verdict("c", now: 200, state) != .allow)
        let byDevice = CapRule(max: 1, per: 1_000, by: [.device])
        let two = subject(devices: ["fid:a", "fid:b"])
        #expect(byDevice.keys(of: two).count == 2)
        let verdictB = RulesEvaluation.cap(
            byDevice, notification: n("e"), subject: subject(devices: ["fid:b"]), now: 200, state: state, inFlight: InFlightTable(), policy: policy)
        #expect(verdictB == .allow, "no notification went to fid:b")
        #expect(
            RulesEvaluation.cap(byDevice, notification: n("e"), subject: two, now: 200, state: state, inFlight: InFlightTable(), policy: policy)
                != .allow)
    }

    @Test("dedup: a device push acknowledged within the window is left out; others and older ones are sent")
    func dedup() {
        var state = InMemoryRulesState()
        record(&state, "a", .sent, at: 100, targets: ["fid:a"])
        let split = RulesEvaluation.dedup(n("a"), targets: ["fid:a", "fid:b"], now: 500, window: 1_000, state: state)
        #expect(split.send == ["fid:b"] && split.duplicates == ["fid:a"])
        #expect(RulesEvaluation.dedup(n("a"), targets: ["fid:a"], now: 1_100, window: 1_000, state: state).send == ["fid:a"])
        record(&state, "x", .inDoubt, at: 100)
        #expect(
            RulesEvaluation.dedup(n("x"), targets: ["fid:a"], now: 500, window: 1_000, state: state).send == ["fid:a"],
            "in doubt is no acknowledgement")
    }
}

@Suite("The in-flight table")
struct InFlightTableTests {
    let key = CapKey(user: .some("u"), category: nil, mapping: nil, device: nil)
    let a = NotificationID(high: 1, low: 1)
    let b = NotificationID(high: 2, low: 2)

    @Test("a second push of a notification in flight waits for the first's outcome")
    func duplicates() {
        var t = InFlightTable()
        let first = t.begin(a, keys: [key])
        let second = t.begin(a, keys: [key])
        #expect(first && !second)
        let parked = t.wait(7, for: .notification(a))
        let atOnce = t.wait(8, for: .notification(b))
        #expect(parked.isEmpty)
        #expect(atOnce == [8], "nothing in flight: decide again at once")
        let noneWoken = t.finish(b)
        let woken = t.finish(a)
        #expect(noneWoken.isEmpty && woken == [7])
        #expect(t.waiterCount == 0 && t.count == 0)
        let again = t.begin(a, keys: [key])
        #expect(again, "after the outcome the notification may be begun again")
    }

    @Test("waits at the boundary wake in order when one of their notifications resolves; cancel forgets")
    func boundary() {
        var t = InFlightTable()
        _ = t.begin(a, keys: [key])
        _ = t.begin(b, keys: [key])
        #expect(t.notifications(countingToward: key) == [a, b])
        _ = t.wait(1, for: .anyOf([a, b]))
        _ = t.wait(2, for: .anyOf([b]))
        _ = t.wait(3, for: .anyOf([a]))
        t.cancel(3)
        let afterA = t.finish(a)
        #expect(afterA == [1])
        #expect(t.notifications(countingToward: key) == [b])
        let afterB = t.finish(b)
        #expect(afterB == [2])
        #expect(t.notifications(countingToward: key).isEmpty)
    }
}
