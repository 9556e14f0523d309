import Testing

@testable import Pipeline

@Suite("EngineLifecycle: the phases of a run, without I/O")
struct EngineLifecycleTests {
    @Test("a run goes idle, reading, draining, closing, closed, and happens once")
    func phases() {
        var l = EngineLifecycle()
        #expect(!l.isReading)
        let r1 = l.start()
        #expect(r1)
        #expect(l.isReading)
        let r2 = l.start()
        #expect(!r2, "a second start is refused")
        l.readEnded()
        #expect(l.phase == .draining)
        #expect(l.readingEnds)
        l.drainEnded()
        #expect(l.phase == .closing)
        l.closed()
        #expect(l.phase == .closed)
    }

    @Test("a stop while reading tells the reader once; a stop before the start reads nothing")
    func stop() {
        var l = EngineLifecycle()
        let r3 = l.start()
        #expect(r3)
        let r4 = l.requestStop()
        #expect(r4 == .stopReading)
        let r5 = l.requestStop()
        #expect(r5 == .none)
        #expect(!l.isReading)

        var early = EngineLifecycle()
        let r6 = early.requestStop()
        #expect(r6 == .none, "no reader yet")
        let r7 = early.start()
        #expect(r7)
        #expect(early.readingEnds, "the reader ends at once")
    }

    @Test("the first failure is kept and ends the read; a later one or a stop changes nothing")
    func failure() {
        var l = EngineLifecycle()
        let r8 = l.start()
        #expect(r8)
        let r9 = l.fail("FCM refused the service account")
        #expect(r9 == .stopReading)
        let r10 = l.fail("kafka: down")
        #expect(r10 == .none)
        let r11 = l.requestStop()
        #expect(r11 == .none)
        #expect(l.failure == "FCM refused the service account")
    }

    @Test("a stop or failure while draining or after changes the phase of nothing")
    func lateInputs() {
        var l = EngineLifecycle()
        let r12 = l.start()
        #expect(r12)
        l.readEnded()
        let r13 = l.requestStop()
        #expect(r13 == .none)
        let r14 = l.fail("late")
        #expect(r14 == .none)
        #expect(l.phase == .draining)
        #expect(l.failure == "late", "still reported")
        l.closed()
        #expect(l.phase == .draining, "closed only after the drain ended")
    }
}
