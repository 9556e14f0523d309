import DeviceRegistry
import TestSupport
import Testing

@Suite("Registry record format: parse, reasons, fuzz")
struct RegistryRecordTests {
    func parse(_ value: String?, key: String? = "alice") -> Result<RegistryUpdate, RegistryRecordError> {
        RegistryRecord.parse(key: key.map { Array($0.utf8) }, value: value.map { Array($0.utf8) })
    }

    func reason(_ value: String?, key: String? = "alice") -> String? {
        if case .failure(let e) = parse(value, key: key) { return e.reason }
        return nil
    }

    @Test("every member of the format is read")
    func fullRecord() throws {
        let update = try parse(
            """
            {"devices": [
              {"token": "tok-1", "platform": "android", "app": "consumer", "labels": {"lang": "de", "tier": "gold"}},
              {"fid": "fid-1", "platform": "ios", "push_to_start": {"DeliveryAttributes": "p2s-1"}},
              {"token": "tok-2", "platform": "web", "app": null, "labels": null},
              {"fid": "fid-2", "platform": "ios", "live_activity_token": "la-1"}
            ]}
            """
        ).get()
        #expect(update.user == "alice")
        #expect(
            update.devices == [
                RegisteredDevice(kind: .token, id: "tok-1", platform: "android", app: "consumer", labels: ["lang": "de", "tier": "gold"]),
                RegisteredDevice(kind: .fid, id: "fid-1", platform: "ios", pushToStart: ["DeliveryAttributes": "p2s-1"]),
                RegisteredDevice(kind: .token, id: "tok-2", platform: "web"),
                RegisteredDevice(kind: .fid, id: "fid-2", platform: "ios", liveActivityToken: "la-1"),
            ])
    }

    @Test("null or empty value: a tombstone; empty list: a user with no devices")
    func tombstones() throws {
        #expect(try parse(nil).get() == RegistryUpdate(user: "alice", devices: nil))
        #expect(try parse("").get() == RegistryUpdate(user: "alice", devices: nil))
        #expect(try parse("{\"devices\": []}").get() == RegistryUpdate(user: "alice", devices: []))
    }

    @Test("unknown members are ignored; a device listed twice counts once")
    func forwardCompatible() throws {
        let update = try parse(
            """
            {"version": 3, "updated_at": "2026-01-01T00:00:00Z",
             "devices": [{"token": "t", "model": "Pixel 9", "platform": "android"}, {"token": "t", "platform": "ios"}]}
            """
        ).get()
        #expect(update.devices == [RegisteredDevice(kind: .token, id: "t", platform: "android")])
    }

    @Test("each way a record can be wrong has its own reason")
    func reasons() {
        #expect(reason("{\"devices\": []}", key: nil) == "the record has no key (the user ID)")
        #expect(reason("{\"devices\": []}", key: "") == "the record has no key (the user ID)")
        #expect(RegistryRecord.parse(key: [0xff, 0xfe], value: nil) == .failure(.init("the key (the user ID) is not UTF-8")))
        #expect(reason("{\"devices\": [")?.hasPrefix("the value is not JSON") == true)
        #expect(reason("[]") == "the value is a JSON array, not an object")
        #expect(reason("{}") == "the value has no \"devices\" member")
        #expect(reason("{\"devices\": {}}") == "\"devices\" is a object, not an array")
        #expect(reason("{\"devices\": [1]}") == "devices[0] is a integer, not an object")
        #expect(reason("{\"devices\": [{\"platform\": \"ios\"}]}") == "devices[0] has neither \"fid\" nor \"token\"")
        #expect(reason("{\"devices\": [{\"fid\": \"f\", \"token\": \"t\"}]}") == "devices[0] has both \"fid\" and \"token\"; give one")
        #expect(reason("{\"devices\": [{\"token\": \"\"}]}") == "devices[0].token is empty")
        #expect(reason("{\"devices\": [{\"token\": 5}]}") == "devices[0].token is a integer, not a string")
        #expect(
            reason("{\"devices\": [{\"token\": \"t\"}, {\"token\": \"u\", \"platform\": \"tizen\"}]}")
                == "devices[1].platform is \"tizen\"; expected android, ios or web")
        #expect(reason("{\"devices\": [{\"token\": \"t\", \"app\": 1}]}") == "devices[0].app is a integer, not a string")
        #expect(reason("{\"devices\": [{\"token\": \"t\", \"labels\": []}]}") == "devices[0].labels is a array, not an object")
        #expect(reason("{\"devices\": [{\"token\": \"t\", \"labels\": {\"lang\": 1}}]}") == "devices[0].labels.lang is a integer, not a string")
        #expect(reason(#"{"devices": [{"token": "t", "push_to_start": "p"}]}"#) == "devices[0].push_to_start is a string, not an object")
        #expect(reason(#"{"devices": [{"token": "t", "push_to_start": {"A": ""}}]}"#) == "devices[0].push_to_start.A is not a non-empty string")
    }

    @Test("fuzz: random bytes and mutated records never crash; every failure says why")
    func fuzz() {
        var random = SplitMix64(seed: 0x5EED_2026)
        let valid = Array(
            #"{"devices": [{"token": "tok-1", "platform": "android", "app": "consumer", "labels": {"lang": "de"}}, {"fid": "f", "platform": "ios"}]}"#
                .utf8)
        let alphabet = Array(#"{}[]":,0123456789.-+eE truefalsnl\u"#.utf8) + [0x00, 0x7f, 0xc3, 0xff]
        var parsed = 0
        var failed = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = valid
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let i = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: bytes[i] = alphabet.randomElement(using: &random)!
                    case 1: bytes.remove(at: i)
                    default: bytes.insert(alphabet.randomElement(using: &random)!, at: i)
                    }
                    if bytes.isEmpty { bytes = [0x7b] }
                }
            } else {
                bytes = (0..<Int.random(in: 1...64, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            }
            switch RegistryRecord.parse(key: Array("u\(round)".utf8), value: bytes) {
            case .success: parsed += 1
            case .failure(let e):
                failed += 1
                #expect(!e.reason.isEmpty)
            }
        }
        #expect(parsed > 0 && failed > 0)
    }
}
