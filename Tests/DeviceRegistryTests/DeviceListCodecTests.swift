import TestSupport
import Testing

@testable import DeviceRegistry

@Suite("Device list encoding in the store")
struct DeviceListCodecTests {
    func decode(_ bytes: [UInt8]) throws -> [RegisteredDevice] {
        try bytes.withUnsafeBytes { try DeviceListCodec.decode($0) }
    }

    @Test("random device lists come back as they went in; the header gives the count")
    func roundTrip() throws {
        var random = SplitMix64(seed: 42)
        let words = ["", "de", "ü-ñ", "consumer", "🚀", String(repeating: "x", count: 200)]
        for _ in 0..<2_000 {
            let devices = (0..<Int.random(in: 0...5, using: &random)).map { i in
                RegisteredDevice(
                    kind: Bool.random(using: &random) ? .token : .fid,
                    id: "id-\(i)-" + words.randomElement(using: &random)!,
                    platform: [nil, "android", "ios", "web"].randomElement(using: &random)!,
                    app: [nil, "consumer", "courier"].randomElement(using: &random)!,
                    labels: Bool.random(using: &random) ? [:] : ["lang": words.randomElement(using: &random)!, "k2": "v"],
                    pushToStart: Int.random(in: 0..<4, using: &random) == 0 ? ["DeliveryAttributes": words.randomElement(using: &random)!] : [:],
                    liveActivityToken: Int.random(in: 0..<4, using: &random) == 0 ? "la-" + words.randomElement(using: &random)! : nil)
            }
            let bytes = DeviceListCodec.encode(devices)
            #expect(try decode(bytes) == devices)
            #expect(try bytes.withUnsafeBytes { try DeviceListCodec.count($0) } == devices.count)
        }
    }

    @Test("a list without push-to-start tokens is written as version 1, byte for byte what earlier versions wrote; one with them as version 2")
    func versions() throws {
        let plain = [RegisteredDevice(kind: .token, id: "tok", platform: "ios", app: "a", labels: ["l": "v"])]
        // Version 1 as pushbridge wrote it before push-to-start tokens: still read.
        let written: [UInt8] = [1, 1, 0b0001_1101, 3] + Array("tok".utf8) + [1] + Array("a".utf8) + [1, 1] + Array("l".utf8) + [1] + Array("v".utf8)
        #expect(DeviceListCodec.encode(plain) == written)
        #expect(try decode(written) == plain)
        var withToken = plain
        withToken[0].pushToStart = ["DeliveryAttributes": "p2s"]
        let bytes = DeviceListCodec.encode(withToken)
        #expect(bytes.first == 2)
        #expect(try decode(bytes) == withToken)
        // Bit 5 in a version 1 list is damage, not a token list.
        #expect(throws: RegistryError.self) { try decode([1] + bytes.dropFirst()) }
        let following = [RegisteredDevice(kind: .fid, id: "f", platform: "ios", liveActivityToken: "la-1")]
        let entry = DeviceListCodec.encode(following)
        #expect(entry.first == 2)
        #expect(try decode(entry) == following)
    }

    @Test("damaged blobs: an error, never a crash")
    func damaged() {
        var random = SplitMix64(seed: 7)
        let good = DeviceListCodec.encode([RegisteredDevice(kind: .token, id: "tok", platform: "ios", app: "a", labels: ["l": "v"])])
        #expect(throws: RegistryError.self) { try decode([]) }
        #expect(throws: RegistryError.self) { try decode([3, 0]) }
        #expect(throws: RegistryError.self) { try decode(good + [0]) }
        for cut in 0..<good.count { #expect(throws: RegistryError.self) { try decode(Array(good.prefix(cut))) } }
        var errors = 0
        for _ in 0..<20_000 {
            var bytes = good
            if Bool.random(using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            } else {
                bytes = [1] + (0..<Int.random(in: 0...24, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
            do { _ = try decode(bytes) } catch { errors += 1 }
        }
        #expect(errors > 0)
    }
}
