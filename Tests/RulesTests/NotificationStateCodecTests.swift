import Rules
import Testing

@Suite("A merged state's binary codec (the rules store's rows)")
struct NotificationStateCodecTests {
    static func states(_ count: Int, seed: UInt64) -> [NotificationState] {
        var rng = RandomChooser(seed: seed)
        let n = NotificationID(eventID: "e", mapping: "m", subject: "u")
        return (0..<count).map { _ in NotificationState((0..<rng.choose(10)).map { _ in FactGenerator.notificationFact(n, &rng, attempts: 4) }) }
    }

    @Test("random merged states round-trip, the empty one too")
    func roundTrip() throws {
        for state in Self.states(2_000, seed: 81) + [NotificationState()] {
            #expect(try NotificationStateCodec.decode(NotificationStateCodec.encode(state)) == state)
        }
    }

    @Test("every truncation and random byte flips are errors or other states, never a crash")
    func damaged() {
        var rng = RandomChooser(seed: 82)
        var errors = 0
        for state in Self.states(200, seed: 83) {
            let bytes = NotificationStateCodec.encode(state)
            for cut in 0..<bytes.count {
                #expect(throws: FactCodecError.self) { try NotificationStateCodec.decode(bytes[..<cut]) }
            }
            for _ in 0..<20 {
                var flipped = bytes
                flipped[rng.choose(bytes.count)] ^= UInt8(1 + rng.choose(255))
                if (try? NotificationStateCodec.decode(flipped)) == nil { errors += 1 }
            }
        }
        #expect(errors > 500, "flips are caught: \(errors) of 4,000")
        #expect(throws: FactCodecError.self) { try NotificationStateCodec.decode(NotificationStateCodec.encode(NotificationState()) + [0]) }
    }
}
