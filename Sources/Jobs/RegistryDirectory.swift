import DeviceRegistry
import Logging
import Mapping
import Operations
import Pipeline
import Threading

/// The device registry as the pipeline sees it (``DeviceDirectory``): a user's devices from the
/// worker's local store, and dead devices dropped from it.
public struct RegistryDirectory: DeviceDirectory {
    let store: RegistryStore
    let logger: Logger

    public init(store: RegistryStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    public func devices(ofUser user: String) throws -> [UserDevice] {
        try store.devices(of: user).map { device in
            UserDevice(kind: device.kind == .fid ? .fid : .token, id: device.id, platform: device.platform, app: device.app)
        }
    }

    public func drop(_ device: String, ofUser user: String) async {
        guard !store.isReadOnly else { return }  // replay: the worker that owns the store drops it
        // The store's writer may be in the middle of a follower's batch: wait on a thread of its
        // own, not on the pool the pipeline runs on.
        let (store, logger) = (self.store, self.logger)
        await DedicatedThread.run {
            do {
                _ = try store.removeDevice(device, of: user)
            } catch {
                // Not fatal: the device stays until the backend deletes it at the source, and
                // FCM answers UNREGISTERED again meanwhile.
                logger.error("cannot drop a dead device from the registry", metadata: ["user": "\(user)", "error": "\(error)"])
            }
        }
    }
}

/// The worker's device registry, from `registry.*`: the local store and the follower that keeps
/// it current. Nil without `registry.topic`.
public struct WorkerRegistry: Sendable {
    public let store: RegistryStore
    public let follower: RegistryFollower
    public let directory: RegistryDirectory

    /// - Parameter kafkaLogs: where the follower's librdkafka lines go (the worker's).
    public init?(settings: PushbridgeConfig, logger: Logger, kafkaLogs: KafkaLogs? = nil) throws {
        guard let topic = settings.registry.topic else { return nil }
        try self.init(
            topic: topic, path: settings.registry.path, cacheMegabytes: settings.registry.cacheMegabytes, brokers: settings.kafka.brokers,
            properties: settings.kafka.properties, logger: logger, kafkaLogs: kafkaLogs)
    }

    /// The store at `path` (created if missing) and a follower of `topic` that fills it.
    public init(
        topic: String, path: String, cacheMegabytes: Int, brokers: [String], properties: [String: String], logger: Logger,
        kafkaLogs: KafkaLogs? = nil
    ) throws {
        store = try RegistryStore(path: path, cacheMegabytes: cacheMegabytes)
        var configuration = RegistryFollower.Configuration()
        configuration.kafkaLogs = kafkaLogs.map { ($0.errorHandler, $0.lineHandler) }
        follower = RegistryFollower(
            bootstrapServers: brokers, properties: properties, topic: topic, store: store, logger: logger, configuration: configuration)
        directory = RegistryDirectory(store: store, logger: logger)
    }
}
