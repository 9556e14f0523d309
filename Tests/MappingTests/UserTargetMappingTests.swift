import Mapping
import Synchronization
import Testing

/// `target: {user: …}` as mapping files spell it: loading, filters, and rendering with the
/// devices the registry gives.
@Suite("target user: loading and rendering with a device lookup")
struct UserTargetMappingTests {
    static func yaml(_ target: String) -> String {
        "version: 1\nevents:\n  e:\n    target: \(target)\n    body: {key: b}\n"
    }

    @Test("the user's field and the optional platform and app filters, a name or a list each")
    func loading() throws {
        let set = try MappingSet.load(files: [("m.yaml", Self.yaml("{user: {field: /to}, platform: android, app: [driver, rider]}"))])
        #expect(
            set.mappings["e"]?.target
                == .user(
                    .field(JSONPointer("/to")!, default: nil),
                    DeviceFilter(platforms: ["android"], apps: ["driver", "rider"], mappingPlatforms: ["android", "ios"])))
        #expect(set.targetsUsers)
        #expect(set.projectChoices.first?.targetsUser == true && set.projectChoices.first?.apps == ["driver", "rider"])
    }

    @Test("filters without a user, an app that cannot be a project, an empty filter and the event ID are refused at their line")
    func refused() {
        #expect(
            loadErrors(Self.yaml("{token: {field: /t}, app: driver}")).map(\.description) == [
                "test.yaml:4:39: error: `app` filters a user's devices: it needs `user`\n    hint: remove it, or target `user:`"
            ])
        #expect(
            loadErrors(Self.yaml("{user: {field: /to}, app: \"a b\", platform: []}")).map(\.description) == [
                "test.yaml:4:56: error: `platform` must be a name or a non-empty list of names",
                "test.yaml:4:39: error: app \"a b\" is not a project name\n    hint: name projects of the config's fcm.projects: letters, digits, - _ .",
            ])
        #expect(
            loadErrors(Self.yaml("{user: {from: event_id}}")).map(\.description) == [
                "test.yaml:4:20: error: target user cannot be the event's ID\n    hint: `{field: /pointer}` to the user ID"
            ])
    }

    @Test("one message per device that passes the filter, FID or token each, naming the device's app")
    func render() throws {
        let set = try load(Self.yaml("{user: {field: /to}, platform: [android, ios]}"))
        let devices = [
            UserDevice(kind: .token, id: "t1", platform: "android", app: "driver"), UserDevice(kind: .fid, id: "f1", platform: "ios"),
            UserDevice(kind: .token, id: "w1", platform: "web"), UserDevice(kind: .token, id: "x1"),
        ]
        let asked = Mutex<[String]>([])
        let rendered = try set.render(
            EventRecord(value: Array(#"{"type":"e","to":"u-7"}"#.utf8)), now: renderNow,
            devices: { user in
                asked.withLock { $0.append(user) }
                return devices
            }
        ).get()
        #expect(asked.withLock { $0 } == ["u-7"] && rendered.user == "u-7")
        #expect(rendered.messages.map { "\($0.target.kind.rawValue):\($0.target.value):\($0.project ?? "-")" } == ["token:t1:driver", "fid:f1:-"])
        #expect(String(decoding: rendered.messages[1].encoded, as: UTF8.self).contains(#""fid":"f1""#))
        #expect(failure(set, #"{"type":"e"}"#) == .missingField(field: "/to", role: "target user"))
        let none = set.render(EventRecord(value: Array(#"{"type":"e","to":"u-8"}"#.utf8)), now: renderNow, devices: { _ in [devices[2]] })
        #expect(throws: MappingFailure.noDevices(user: "u-8")) { try none.get() }
        let noRegistry = set.render(EventRecord(value: Array(#"{"type":"e","to":"u-8"}"#.utf8)), now: renderNow)
        #expect(throws: MappingFailure.registryUnavailable("no device registry is configured (registry.topic)")) { try noRegistry.get() }
    }

    @Test("without a platform filter, a user's devices of platforms the mapping does not send to are left out; unknown platforms pass")
    func mappingPlatforms() throws {
        let devices = [
            UserDevice(kind: .fid, id: "a", platform: "android"), UserDevice(kind: .fid, id: "w", platform: "web"), UserDevice(kind: .fid, id: "x"),
        ]
        func sent(_ yaml: String) throws -> [String] {
            try load(yaml).render(EventRecord(value: Array(#"{"type":"e","to":"u"}"#.utf8)), now: renderNow, devices: { _ in devices }).get()
                .messages.map(\.target.value)
        }
        #expect(try sent(Self.yaml("{user: {field: /to}}")) == ["a", "x"])
        let web = "version: 1\nevents:\n  e:\n    target: {user: {field: /to}}\n    body: Hi\n    platforms: [android, ios, web]\n"
        #expect(try sent(web) == ["a", "w", "x"])
    }
}
