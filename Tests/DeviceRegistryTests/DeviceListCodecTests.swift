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
                    labels: Bool.random(using: &random) ? [:] : ["lang": words.randomElement(using: &random)!, "k2": "v"])
            }
            let bytes = DeviceListCodec.encode(devices)
            #expect(try decode(bytes) == devices)
            #expect(try bytes.withUnsafeBytes { try DeviceListCodec.count($0) } == devices.count)
        }
    }

    @Test("damaged blobs: an error, never a crash")
    func damaged() {
        var random = SplitMix64(seed: 7)
        let good = DeviceListCodec.encode([RegisteredDevice(kind: .token, id: "tok", platform: "ios", app: "a", labels: ["l": "v"])])
        #expect(throws: RegistryError.self) { try decode([]) }
        #expect(throws: RegistryError.self) { try decode([2, 0]) }
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
