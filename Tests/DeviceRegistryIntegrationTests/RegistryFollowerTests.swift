import DeviceRegistry
import Foundation
import Kafka
import TestSupport
import Testing

@Suite("Registry follower on real brokers: load, update, tombstone, invalid records, readiness, restart")
struct RegistryFollowerTests {
    @Test("loads every partition, then applies updates, tombstones and empty device lists", arguments: BrokerKind.allCases)
    func loadUpdateTombstone(kind: BrokerKind) async throws {
        let broker = try await RegistryBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 3)
        try await broker.produce((0..<50).map { ("user-\($0)", devicesJSON(["tok-\($0)-a", "tok-\($0)-b"])) }, to: topic)
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("registry.sqlite"))
        let follower = broker.follower(topic: topic, store: store)
        try await following(follower) {
            try await caughtUp(follower)
            #expect(follower.applied == 50)
            #expect(store.userCount == 50)
            #expect(store.deviceCount == 100)
            #expect(try store.devices(of: "user-7").map(\.id) == ["tok-7-a", "tok-7-b"])
            #expect(try store.devices(of: "user-7").first?.platform == "android")

            try await broker.produceInOrder(
                [("user-7", devicesJSON(["tok-7-c"])), ("user-8", nil), ("user-9", "{\"devices\": []}")], to: topic)
            try await eventually(follower) { $0.applied == 53 }
            #expect(try store.devices(of: "user-7").map(\.id) == ["tok-7-c"])
            #expect(try !store.contains("user-8"))
            #expect(try store.contains("user-9"))
            #expect(try store.devices(of: "user-9").isEmpty)
            #expect(store.userCount == 49)
            #expect(store.deviceCount == 100 - 2 + 1 - 2 - 2)
            #expect(follower.lag == 0)
        }
    }

    // Tansu answers the high watermark wrongly (1 for a partition of many records,
    // docs/testing.md): a follower that trusted it would call itself caught up after a record.
    @Test("caught up means every record there at start is applied", arguments: BrokerKind.allCases)
    func readyMeansLoaded(kind: BrokerKind) async throws {
        let broker = try await RegistryBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 2)
        try await broker.produce((0..<3_000).map { ("user-\($0)", devicesJSON(["tok-\($0)"])) }, to: topic)
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("registry.sqlite"))
        var configuration = RegistryFollower.Configuration()
        configuration.maxBatch = 200
        let follower = broker.follower(topic: topic, store: store, configuration: configuration)
        #expect(!follower.caughtUp)
        try await following(follower) {
            try await caughtUp(follower)
            let status = follower.status
            #expect(status.applied == 3_000)
            #expect(store.userCount == 3_000)
            #expect(status.lag == 0)
            #expect(try store.offsets(topic: topic).values.reduce(0, +) == 3_000)
        }
    }

    // The mock cluster can leave a partition without a leader: nothing of it can be read, so
    // the follower must stay unready however far it got elsewhere.
    @Test("not caught up while a partition cannot be read; caught up once it can", arguments: [BrokerKind.mock])
    func notReadyWhileCatchingUp(kind: BrokerKind) async throws {
        let broker = try await RegistryBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 2)
        try await broker.produce((0..<100).map { ("p0-user-\($0)", devicesJSON(["tok-\($0)"])) }, to: topic, partition: 0)
        try await broker.produce((0..<100).map { ("p1-user-\($0)", devicesJSON(["tok-\($0)"])) }, to: topic, partition: 1)
        try broker.mock!.setPartitionLeader(topic: topic, partition: 1, brokerID: nil)
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("registry.sqlite"))
        var configuration = RegistryFollower.Configuration()
        configuration.watermarkTimeout = .seconds(1)
        let follower = broker.follower(topic: topic, store: store, configuration: configuration)
        try await following(follower) {
            try await eventually(follower) { $0.partitions[0]?.reachedEnd == true }
            #expect(!follower.caughtUp)
            #expect(store.userCount == 100)
            #expect(try store.contains("p0-user-99"))
            #expect(try !store.contains("p1-user-0"))

            try broker.mock!.setPartitionLeader(topic: topic, partition: 1, brokerID: 1)
            try await caughtUp(follower)
            #expect(store.userCount == 200)
        }
    }

    @Test("a record that does not parse is counted and skipped; the registry goes on", arguments: BrokerKind.allCases)
    func invalidRecordSkipped(kind: BrokerKind) async throws {
        let broker = try await RegistryBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 1)
        try await broker.produceInOrder(
            [
                ("alice", devicesJSON(["tok-a"])),
                ("bob", "{\"devices\": [{\"token\": "),  // cut short
                ("carol", #"{"devices": [{"token": "tok-c", "platform": "symbian"}]}"#),  // a platform the format has not
                ("dave", "[1, 2]"),
                ("erin", devicesJSON(["tok-e"])),
            ], to: topic)
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("registry.sqlite"))
        let follower = broker.follower(topic: topic, store: store)
        try await following(follower) {
            try await caughtUp(follower)
            #expect(follower.invalid == 3)
            #expect(follower.applied == 2)
            #expect(try store.contains("alice") && store.contains("erin"))
            #expect(try !store.contains("bob") && !store.contains("carol") && !store.contains("dave"))
            #expect(try store.offsets(topic: topic) == [0: 5])

            try await broker.produceInOrder([("frank", devicesJSON(["tok-f"]))], to: topic)
            try await eventually(follower) { $0.applied == 3 }
            #expect(try store.contains("frank"))
        }
    }

    @Test("a restart reads only what it has not applied", arguments: BrokerKind.allCases)
    func restartResumes(kind: BrokerKind) async throws {
        let broker = try await RegistryBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 2)
        try await broker.produce((0..<100).map { ("user-\($0)", devicesJSON(["tok-\($0)"])) }, to: topic)
        let folder = try TemporaryFolder()
        let path = folder.path("registry.sqlite")
        do {
            let store = try RegistryStore(path: path)
            let first = broker.follower(topic: topic, store: store)
            try await following(first) { try await caughtUp(first) }
            #expect(first.applied == 100)
        }
        let store = try RegistryStore(path: path)
        #expect(store.userCount == 100)
        #expect(try store.offsets(topic: topic).values.reduce(0, +) == 100)
        let second = broker.follower(topic: topic, store: store)
        try await following(second) {
            try await caughtUp(second)
            #expect(second.applied == 0)
            try await broker.produceInOrder([("user-100", devicesJSON(["tok-100"]))], to: topic)
            try await eventually(second) { $0.applied == 1 }
            #expect(store.userCount == 101)
        }
    }

    @Test("a device FCM reported dead is dropped at once and stays out until the source deletes it", arguments: BrokerKind.allCases)
    func invalidationDropsDevice(kind: BrokerKind) async throws {
        let broker = try await RegistryBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 1)
        try await broker.produceInOrder([("alice", devicesJSON(["tok-dead", "tok-live"]))], to: topic)
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("registry.sqlite"))
        let follower = broker.follower(topic: topic, store: store)
        try await following(follower) {
            try await caughtUp(follower)
            #expect(try store.removeDevice("tok-dead", of: "alice"))
            #expect(try store.devices(of: "alice").map(\.id) == ["tok-live"])
            #expect(store.deviceCount == 1)

            // The backend changes another device before it has read the invalidation.
            try await broker.produceInOrder([("alice", devicesJSON(["tok-dead", "tok-live", "tok-new"]))], to: topic)
            try await eventually(follower) { $0.applied == 2 }
            #expect(try store.devices(of: "alice").map(\.id) == ["tok-live", "tok-new"])

            // Deleted at the source; later listed again, it is taken at its word.
            try await broker.produceInOrder(
                [("alice", devicesJSON(["tok-live", "tok-new"])), ("alice", devicesJSON(["tok-dead", "tok-live"]))], to: topic)
            try await eventually(follower) { $0.applied == 4 }
            #expect(try store.devices(of: "alice").map(\.id) == ["tok-dead", "tok-live"])
        }
    }

    @Test("an empty topic is caught up at once", arguments: BrokerKind.allCases)
    func emptyTopic(kind: BrokerKind) async throws {
        let broker = try await RegistryBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 3)
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("registry.sqlite"))
        let follower = broker.follower(topic: topic, store: store)
        try await following(follower) {
            try await caughtUp(follower)
            #expect(follower.applied == 0)
            #expect(store.userCount == 0)
        }
    }

    @Test("a missing topic, or a file filled from another topic, is a clear error", arguments: BrokerKind.allCases)
    func wrongTopic(kind: BrokerKind) async throws {
        let broker = try await RegistryBroker.start(kind)
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("registry.sqlite"))
        let missing = broker.follower(topic: "no-such-registry-\(UUID().uuidString.prefix(6))", store: store)
        let error = await #expect(throws: RegistryError.self) { try await missing.run() }
        #expect(error?.code == .missingTopic)

        let topic = try await broker.makeTopic(partitions: 1)
        try store.apply([RegistryUpdate(user: "u", devices: [])], offsets: [0: 1], topic: "older-topic")
        let other = broker.follower(topic: topic, store: store)
        let otherError = await #expect(throws: RegistryError.self) { try await other.run() }
        #expect(otherError?.code == .otherTopic)
    }

    // The mock cluster answers high watermarks right; tansu's are too low (docs/testing.md).
    @Test("the lag of a file against its topic, without following (pushbridge registry)", arguments: [BrokerKind.mock])
    func lagOfFile(kind: BrokerKind) async throws {
        let broker = try await RegistryBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 2)
        try await broker.produce((0..<40).map { ("user-\($0)", devicesJSON(["tok-\($0)"])) }, to: topic, partition: 0)
        let folder = try TemporaryFolder()
        let path = folder.path("registry.sqlite")
        let store = try RegistryStore(path: path)
        let follower = broker.follower(topic: topic, store: store)
        try await following(follower) { try await caughtUp(follower) }
        try await broker.produce((40..<45).map { ("user-\($0)", devicesJSON(["tok-\($0)"])) }, to: topic, partition: 0)
        try await broker.produce((0..<3).map { ("other-\($0)", devicesJSON(["tok-o\($0)"])) }, to: topic, partition: 1)

        let view = try RegistryStore(path: path, readOnly: true)
        let lag = try await RegistryFollower.lag(topic: topic, store: view, bootstrapServers: [broker.bootstrapServers], properties: [:])
        #expect(lag == [.init(partition: 0, next: 40, end: 45), .init(partition: 1, next: nil, end: 3)])
        #expect(lag.map(\.lag) == [5, 3])
    }

    @Test("waiting for the follower ends when its run fails", arguments: [BrokerKind.mock])
    func waitEndsOnFailure(kind: BrokerKind) async throws {
        let broker = try await RegistryBroker.start(kind)
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("registry.sqlite"))
        let follower = broker.follower(topic: "no-such-registry-\(UUID().uuidString.prefix(6))", store: store)
        let caught = try await withThrowingTaskGroup(of: Bool?.self) { group in
            group.addTask {
                _ = try? await follower.run()
                return nil
            }
            group.addTask { await follower.waitUntilCaughtUp() }
            var answer: Bool?
            for try await result in group where result != nil { answer = result }
            return answer
        }
        #expect(caught == false)
    }
}
