import Dates
import Preferences
import TestSupport
import Testing

@testable import DeviceRegistry

@Suite("Registry records: a user's preferences (time zone, muted categories, quiet hours)")
struct RegistryPreferencesTests {
    func parse(_ value: String) throws -> RegistryUpdate {
        try RegistryRecord.parse(key: Array("alice".utf8), value: Array(value.utf8)).get()
    }

    static func window(_ from: String, _ to: String) -> UserChoices.QuietHours {
        .window(QuietWindow(from: ClockTime(from)!, to: ClockTime(to)!)!)
    }

    @Test("every preference member is read; a device's muted categories too; sorted, each once")
    func members() throws {
        let update = try parse(
            """
            {"devices": [{"token": "t1", "platform": "android", "muted": ["social", "marketing", "social"]}, {"fid": "f1"}],
             "time_zone": "Europe/Berlin", "muted": ["news.digest", "marketing"], "quiet_hours": {"from": "22:00", "to": "07:30"}}
            """)
        #expect(update.devices?.map(\.muted) == [["marketing", "social"], []])
        #expect(
            update.preferences
                == UserChoices(timeZone: "Europe/Berlin", muted: ["marketing", "news.digest"], quietHours: Self.window("22:00", "07:30")))
        #expect(update.droppedPreferences.isEmpty)
        #expect(try parse(#"{"devices": [], "quiet_hours": "off"}"#).preferences.quietHours == .off)
        #expect(try parse(#"{"devices": [], "time_zone": null, "muted": null, "quiet_hours": null}"#).preferences.isEmpty)
    }

    @Test("a preference the format does not allow is left out, named, and the devices still apply")
    func dropped() throws {
        let cases: [(String, [String])] = [
            (#""time_zone": 1"#, ["time_zone"]),
            (#""time_zone": "../etc/passwd""#, ["time_zone"]),
            (#""time_zone": "Europe//Berlin""#, ["time_zone"]),
            (#""muted": "marketing""#, ["muted"]),
            (#""muted": ["Marketing"]"#, ["muted"]),
            (#""muted": ["has space"]"#, ["muted"]),
            (#""quiet_hours": {"from": "25:00", "to": "07:00"}"#, ["quiet_hours"]),
            (#""quiet_hours": {"from": "7:00", "to": "08:00"}"#, ["quiet_hours"]),
            (#""quiet_hours": {"from": "22:00", "to": "22:00"}"#, ["quiet_hours"]),
            (#""quiet_hours": {"from": "22:00"}"#, ["quiet_hours"]),
            (#""quiet_hours": {"from": "22:00", "to": "07:00", "days": "weekdays"}"#, ["quiet_hours"]),
            (#""quiet_hours": "on""#, ["quiet_hours"]),
            (#""time_zone": 5, "muted": [1], "quiet_hours": []"#, ["time_zone", "muted", "quiet_hours"]),
        ]
        for (members, names) in cases {
            let update = try parse(#"{"devices": [{"token": "t"}], "# + members + "}")
            #expect(update.droppedPreferences == names, "\(members)")
            #expect(update.devices?.map(\.id) == ["t"], "\(members)")
        }
        let devices = try parse(#"{"devices": [{"token": "a", "muted": 3}, {"token": "b", "muted": ["X"]}, {"token": "c", "muted": ["ok"]}]}"#)
        #expect(devices.droppedPreferences == ["devices[].muted"], "named once per record")
        #expect(devices.devices?.map(\.muted) == [[], [], ["ok"]])
    }

    @Test("the store keeps preferences with the devices: read back, kept when a dead device or token is dropped, gone with a tombstone")
    func stored() throws {
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("r.sqlite"))
        let choices = UserChoices(timeZone: "America/New_York", muted: ["marketing"], quietHours: Self.window("23:00", "06:00"))
        let devices = [
            RegisteredDevice(kind: .token, id: "t1", platform: "ios", pushToStart: ["A": "p2s"], muted: ["social"]),
            RegisteredDevice(kind: .fid, id: "f1"),
        ]
        try store.apply([RegistryUpdate(user: "u", devices: devices, preferences: choices)], offsets: [0: 1], topic: "reg")
        #expect(try store.user("u") == RegisteredUser(devices: devices, preferences: choices))
        #expect(try store.removeDevice("f1", of: "u"))
        #expect(try store.removePushToStart("p2s", of: "u"))
        var expected = devices
        expected.removeLast()
        expected[0].pushToStart = [:]
        #expect(try store.user("u") == RegisteredUser(devices: expected, preferences: choices))
        try store.apply([RegistryUpdate(user: "u", devices: nil)], offsets: [0: 2], topic: "reg")
        #expect(try store.user("u") == nil)
        #expect(try store.devices(of: "u").isEmpty)
    }

    @Test("preferences make a version 3 list; without them the bytes are those of versions 1 and 2; random ones round-trip")
    func codec() throws {
        let plain = [RegisteredDevice(kind: .token, id: "tok")]
        #expect(DeviceListCodec.encode(plain).first == 1)
        #expect(DeviceListCodec.encode(plain, preferences: UserChoices()) == DeviceListCodec.encode(plain))
        #expect(DeviceListCodec.encode(plain, preferences: UserChoices(quietHours: .off)).first == 3)
        #expect(DeviceListCodec.encode([RegisteredDevice(kind: .token, id: "t", muted: ["a"])]).first == 3)
        var random = SplitMix64(seed: 7)
        let categories = ["marketing", "social", "news.digest", "a"]
        for _ in 0..<1_000 {
            let devices = (0..<Int.random(in: 0...3, using: &random)).map { i in
                RegisteredDevice(
                    kind: .fid, id: "d\(i)", liveActivityToken: Bool.random(using: &random) ? "la" : nil,
                    muted: Bool.random(using: &random) ? [] : [categories.randomElement(using: &random)!])
            }
            let from = Int.random(in: 0..<1440, using: &random)
            let to = (from + Int.random(in: 1..<1440, using: &random)) % 1440
            let quiet: UserChoices.QuietHours? =
                [nil, .off, .window(QuietWindow(from: ClockTime(minuteOfDay: from)!, to: ClockTime(minuteOfDay: to)!)!)].randomElement(
                    using: &random)!
            let choices = UserChoices(
                timeZone: Bool.random(using: &random) ? "Asia/Kathmandu" : nil, muted: Bool.random(using: &random) ? [] : ["social"],
                quietHours: quiet)
            let bytes = DeviceListCodec.encode(devices, preferences: choices)
            let back = try bytes.withUnsafeBytes { try DeviceListCodec.decodeUser($0) }
            #expect(back == RegisteredUser(devices: devices, preferences: choices))
            #expect(try bytes.withUnsafeBytes { try DeviceListCodec.count($0) } == devices.count)
            // Every shorter prefix is damaged, never a crash.
            for cut in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 7)) {
                #expect(throws: RegistryError.self) { try Array(bytes[..<cut]).withUnsafeBytes { try DeviceListCodec.decodeUser($0) } }
            }
        }
    }
}

@Suite("Registry files filled before preferences existed")
struct RegistryPreferencesUpgradeTests {
    @Test("a new file is marked as storing preferences; an old one forgets its offsets once (rows kept), so the topic is read again")
    func reread() throws {
        let folder = try TemporaryFolder()
        let fresh = try RegistryStore(path: folder.path("new.sqlite"))
        try fresh.apply([RegistryUpdate(user: "u", devices: [RegisteredDevice(kind: .fid, id: "f")])], offsets: [0: 5], topic: "reg")
        #expect(try fresh.rereadForPreferences() == false)
        #expect(try fresh.offsets(topic: "reg") == [0: 5])

        // A file as a pushbridge before preferences wrote it: no mark.
        let path = folder.path("old.sqlite")
        do {
            let writer = try RegistryWriter(path: path, cacheKiB: 256)
            try writer.apply([RegistryUpdate(user: "u", devices: [RegisteredDevice(kind: .fid, id: "f")])], offsets: [0: 7, 1: 3], topic: "reg")
            try writer.connection.execute("DELETE FROM counts WHERE name = 'preferences'")
        }
        let old = try RegistryStore(path: path)
        #expect(try old.rereadForPreferences() == true)
        #expect(try old.offsets(topic: "reg").isEmpty, "read again from the start")
        #expect(try old.devices(of: "u").map(\.id) == ["f"], "the rows stay, and serve lookups meanwhile")
        #expect(try old.rereadForPreferences() == false, "once")
    }
}
