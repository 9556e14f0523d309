import Rules
import Testing

@Suite("Facts: identities and the binary codec")
struct FactCodecTests {
    @Test("N is 16 bytes of SHA-256 over length-prefixed fields: stable, and fields do not run together")
    func notificationIDs() {
        let n = NotificationID(eventID: "e-1", mapping: "chat.message", subject: "u-42")
        #expect(n == NotificationID(eventID: "e-1", mapping: "chat.message", subject: "u-42"))
        #expect(n.bytes.count == 16)
        #expect(n != NotificationID(eventID: "e-1c", mapping: "hat.message", subject: "u-42"))
        #expect(n != NotificationID(eventID: "e-1", mapping: "chat.message", subject: "u-43"))
        #expect(n.description.count == 32)
        let a = DevicePushID(notification: n, target: "fid:abc")
        #expect(a == DevicePushID(notification: n, target: "fid:abc"))
        #expect(a != DevicePushID(notification: n, target: "token:abc"))
        #expect(DeviceKey(target: "fid:abc") != DeviceKey(target: "fid:abd"))
    }

    @Test("SHA-256 of the length-prefixed fields, as an independent computation gives it")
    func notificationIDKnownValue() {
        // Python: h=hashlib.sha256(); for f in [b"pushbridge.notification.v1", b"e", b"m", b"s"]:
        //   h.update(len(f).to_bytes(8, "big")); h.update(f); h.hexdigest()[:32]
        let n = NotificationID(eventID: "e", mapping: "m", subject: "s")
        #expect(n.description == "dec83bf262b57c78d9137652e800bb00")
        // The same over ("pushbridge.device-push.v1", N's hex, "fid:abc") and
        // ("pushbridge.device.v1", "fid:abc"), the first 16 hex digits; a digest window over
        // ("pushbridge.digest.v1", "k", "m", "5"), 32.
        #expect(DevicePushID(notification: n, target: "fid:abc").description == "5aabeb819de7260c")
        #expect(DeviceKey(target: "fid:abc").value == 0xebf6_8d90_92f2_3fe8)
        #expect(NotificationID(digestKey: "k", mapping: "m", opened: 5).description == "fdb1024f491c4be089a01e5fd3b7b5e1")
    }

    @Test("every kind round-trips, with and without optional members")
    func roundTrip() throws {
        var rng = RandomChooser(seed: 7)
        for _ in 0..<2_000 {
            let fact = FactGenerator.fact(&rng)
            #expect(try FactCodec.decode(FactCodec.encode(fact)) == fact)
        }
    }

    @Test("a typical reservation and sent fact are small")
    func sizes() {
        let n = NotificationID(eventID: "3f0c9a7e-1b2d-4c5e-8f90-a1b2c3d4e5f6", mapping: "chat.message", subject: "user-1234567")
        let reserved = NotificationFact(
            notification: n, status: .reserved, attempt: 1, at: 1_801_234_567_890, expires: 1_801_320_967_890, owner: "w-2:17:9f3a",
            subject: CapSubject(user: "user-1234567", category: "social", mapping: "chat.message"))
        let sent = NotificationFact(
            notification: n, status: .sent, attempt: 1, at: 1_801_234_568_012, expires: 1_801_320_968_012, owner: "w-2:17:9f3a",
            devices: [DevicePushID(notification: n, target: "fid:a")])
        #expect(FactCodec.encode(.notification(reserved)).count == 76)
        #expect(FactCodec.encode(.notification(sent)).count == 50)
    }

    @Test("every truncation of a fact is an error")
    func truncations() {
        var rng = RandomChooser(seed: 11)
        for _ in 0..<200 {
            let bytes = FactCodec.encode(FactGenerator.fact(&rng))
            for length in 0..<bytes.count {
                #expect(throws: FactCodecError.self) { try FactCodec.decode(bytes.prefix(length)) }
            }
        }
    }

    @Test("damaged facts: unknown version or kind, bytes after the end, an overlong varint, bad UTF-8")
    func damaged() throws {
        let claim = FactCodec.encode(.claim(Claim(at: 5, owner: "w", partitionCount: 6)))
        #expect(try FactCodec.decode(claim) == .claim(Claim(at: 5, owner: "w", partitionCount: 6)))
        func error(_ bytes: [UInt8]) -> String? {
            do {
                _ = try FactCodec.decode(bytes)
                return nil
            } catch { return error.message }
        }
        #expect(error([2] + claim.dropFirst()) == "unknown fact version 2")
        #expect(error([1, 9] + claim.dropFirst(2)) == "unknown fact kind 9")
        #expect(error(claim + [0]) == "1 bytes after the fact")
        #expect(error([1, 5] + Array(repeating: 0xff, count: 10) + [0]) == "varint overflows 64 bits")
        #expect(error([1, 5, 2, 2, 0xc3, 0x28, 6]) == "text that is not UTF-8")
        #expect(error([1, 5, 2, 0xff, 0x7f]) == "string of 16383 bytes")
        #expect(error([]) == "truncated")
    }

    @Test("random byte flips and random bytes never crash the decoder")
    func fuzz() {
        var rng = RandomChooser(seed: 13)
        var decoded = 0
        for i in 0..<20_000 {
            var bytes = FactCodec.encode(FactGenerator.fact(&rng))
            if i % 4 == 0 {
                bytes = (0..<rng.choose(80)).map { _ in UInt8(rng.choose(256)) }
            } else {
                for _ in 0...rng.choose(3) { bytes[rng.choose(bytes.count)] ^= UInt8(1 + rng.choose(255)) }
            }
            if (try? FactCodec.decode(bytes)) != nil { decoded += 1 }
        }
        #expect(decoded < 20_000)
    }
}

/// Random facts for the codec and lattice tests.
enum FactGenerator {
    static let owners = ["w-1:3:a1", "w-2:4:b2", "w-3:4:c3"]

    static func fact(_ rng: inout RandomChooser) -> Fact {
        if rng.choose(6) == 0 {
            return .claim(Claim(at: Int64(rng.choose(1_000_000)) - 10, owner: owners[rng.choose(3)], partitionCount: Int32(rng.choose(1_000))))
        }
        let n = NotificationID(high: rng.next(), low: rng.next())
        return .notification(notificationFact(n, &rng))
    }

    static func notificationFact(_ n: NotificationID, _ rng: inout RandomChooser, attempts: Int = 1_000) -> NotificationFact {
        let status = FactStatus.allCases[rng.choose(4)]
        let at = 1_800_000_000_000 + Int64(rng.choose(100_000))
        let subject = CapSubject(
            user: rng.choose(3) == 0 ? nil : "user-\(rng.choose(5))", category: rng.choose(3) == 0 ? nil : "social",
            mapping: ["chat.message", "offer", "é✓"][rng.choose(3)], devices: (0..<rng.choose(3)).map { _ in DeviceKey(rng.next()) })
        return NotificationFact(
            notification: n, status: status, attempt: UInt32(1 + rng.choose(attempts)), at: at, expires: at + Int64(rng.choose(86_400_000)),
            owner: owners[rng.choose(3)], subject: subject, devices: (0..<rng.choose(4)).map { _ in DevicePushID(rng.next() % 16) })
    }
}
