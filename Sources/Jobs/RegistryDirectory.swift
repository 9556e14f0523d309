import Dates
import DeviceRegistry
import Logging
import Mapping
import Operations
import Pipeline
import Synchronization
import Threading

/// The device registry as the pipeline sees it (``DeviceDirectory``): a user's devices and
/// preferences from the worker's local store, and dead devices dropped from it.
public struct RegistryDirectory: DeviceDirectory {
    let store: RegistryStore
    let logger: Logger
    /// Where users' time zones are looked up, and the zone of those without one it knows
    /// (`rules.default_time_zone`).
    let zones: TimeZoneDatabase
    let defaultZone: ZoneRules
    /// Lookups of users whose `time_zone` this machine's tzdata does not know (judged in the
    /// default zone): `pushbridge_rules_unknown_time_zone_total`, and one warning per name.
    public let unknownZones = UnknownZones()

    /// Counts lookups that fell back to the default zone, and warns once per zone name.
    public final class UnknownZones: Sendable {
        private let state = Mutex<(lookups: Int, warned: Set<String>)>((0, []))

        public var lookups: Int { state.withLock { $0.lookups } }

        func fellBack(_ name: String, logger: Logger, defaultZone: ZoneRules) {
            let first = state.withLock { state in
                state.lookups += 1
                return state.warned.count < 100 && state.warned.insert(name).inserted
            }
            guard first else { return }
            logger.warning(
                "a user's time_zone is not one this machine's tzdata knows: judged in the default zone (rules.default_time_zone)",
                metadata: ["time_zone": "\(name)", "default": "\(defaultZone.name)"])
        }
    }

    public init(store: RegistryStore, logger: Logger, defaultZone: ZoneRules = .utc, zones: TimeZoneDatabase = .shared) {
        self.store = store
        self.logger = logger
        self.defaultZone = defaultZone
        self.zones = zones
    }

    public func devices(ofUser user: String) throws -> [UserDevice] {
        try store.devices(of: user).map(Self.device)
    }

    public func record(ofUser user: String) throws -> UserRecord {
        guard let found = try store.user(user) else { return UserRecord(devices: []) }
        let record = Self.record(found, zones: zones, defaultZone: defaultZone)
        if let name = record.preferences.unknownZone { unknownZones.fellBack(name, logger: logger, defaultZone: defaultZone) }
        return record
    }

    /// What the rules see of a user the registry holds: their devices, and their preferences with
    /// the zone resolved (`defaultZone` for none, or one `zones` does not know).
    public static func record(_ found: RegisteredUser, zones: TimeZoneDatabase, defaultZone: ZoneRules) -> UserRecord {
        var preferences = UserPreferences(choices: found.preferences, zone: defaultZone)
        if let name = found.preferences.timeZone {
            if let zone = zones.zone(named: name) { preferences.zone = zone } else { preferences.unknownZone = name }
        }
        return UserRecord(devices: found.devices.map(Self.device), preferences: preferences)
    }

    private static func device(_ device: RegisteredDevice) -> UserDevice {
        UserDevice(
            kind: device.kind == .fid ? .fid : .token, id: device.id, platform: device.platform, app: device.app,
            pushToStart: device.pushToStart, liveActivityToken: device.liveActivityToken, muted: device.muted)
    }

    public func drop(_ device: String, ofUser user: String) async {
        await write("cannot drop a dead device from the registry", user: user) { store in _ = try store.removeDevice(device, of: user) }
    }

    public func dropPushToStart(_ token: String, ofUser user: String) async {
        await write("cannot drop a dead push-to-start token from the registry", user: user) { store in
            try store.removePushToStart(token, of: user)
        }
    }

    /// Runs `change` on the store's writer, on a thread of its own: the writer may be in the
    /// middle of a follower's batch, and the pipeline's pool must not wait on it.
    private func write(_ failure: String, user: String, _ change: @escaping @Sendable (RegistryStore) throws -> Void) async {
        guard !store.isReadOnly else { return }  // replay: the worker that owns the store changes it
        let (store, logger) = (self.store, self.logger)
        await DedicatedThread.run {
            do {
                try change(store)
            } catch {
                // Not fatal: it stays until the backend deletes it at the source, and FCM
                // answers UNREGISTERED again meanwhile.
                logger.error("\(failure)", metadata: ["user": "\(user)", "error": "\(error)"])
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
            properties: settings.kafka.properties, logger: logger, kafkaLogs: kafkaLogs, defaultZone: Self.defaultZone(settings))
    }

    /// `rules.default_time_zone` (the config loader refused one this machine does not know).
    public static func defaultZone(_ settings: PushbridgeConfig) -> ZoneRules {
        TimeZoneDatabase.shared.zone(named: settings.rules.defaultTimeZone) ?? .utc
    }

    /// The store at `path` (created if missing) and a follower of `topic` that fills it.
    public init(
        topic: String, path: String, cacheMegabytes: Int, brokers: [String], properties: [String: String], logger: Logger,
        kafkaLogs: KafkaLogs? = nil, defaultZone: ZoneRules = .utc
    ) throws {
        store = try RegistryStore(path: path, cacheMegabytes: cacheMegabytes)
        var configuration = RegistryFollower.Configuration()
        configuration.kafkaLogs = kafkaLogs.map { ($0.errorHandler, $0.lineHandler) }
        follower = RegistryFollower(
            bootstrapServers: brokers, properties: properties, topic: topic, store: store, logger: logger, configuration: configuration)
        directory = RegistryDirectory(store: store, logger: logger, defaultZone: defaultZone)
    }
}
