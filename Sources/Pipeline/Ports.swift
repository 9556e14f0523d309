import FCM
import Kafka
import Mapping

// What the pipeline needs from the outside world. The real implementations are KafkaConsumer,
// FCMClient and KafkaProducer; tests of the pipeline's logic substitute their own.

/// Where the pipeline's events come from and where their offsets go: a consumer in a group
/// (``KafkaConsumer``), or a fake in tests.
///
/// Rebalances reach the pipeline through the ``KafkaRebalanceHandler`` the source was made
/// with, and nothing new is fetched while one runs: on assign, before any message of the new
/// partitions; on revoke, while they are still owned (commits succeed), with their messages not
/// yet handed out dropped; on loss, when another member may own them already.
public protocol MessageSource: Sendable {
    associatedtype Messages: AsyncSequence<KafkaMessage, KafkaError>

    /// Joins the group for `topics`; partitions come through the rebalance handler.
    func subscribe(topics: [String]) throws(KafkaError)
    /// The messages of the partitions assigned and not paused, until ``close()``. Messages
    /// handed over before a pause may still arrive after it.
    var messages: Messages { get }
    /// The partitions held now.
    var assignment: Set<TopicPartition> { get }
    /// Stops fetching `partitions`; ``resume(_:)`` goes on from the first message not handed out.
    func pause(_ partitions: [TopicPartition]) throws(KafkaError)
    func resume(_ partitions: [TopicPartition]) throws(KafkaError)
    /// Commits `offsets` (with their metadata) for the group and waits for the broker.
    func commit(_ offsets: [TopicPartitionOffset]) async throws(KafkaError)
    /// The group's committed offsets, with their metadata.
    func committedOffsets(_ partitions: [TopicPartition]) async throws(KafkaError) -> [TopicPartitionOffset]
    /// How many partitions `topic` has.
    func partitionCount(of topic: String) async throws(KafkaError) -> Int
    /// Leaves the group; ``messages`` ends.
    func close() async
}

/// Sends one FCM message, with retries, and says how it ended: with one of the deployment's
/// Firebase projects (``FCMProjects``), or a fake in tests.
public protocol PushSending: Sendable {
    /// The Firebase project ID that `project` sends to (a name of `fcm.projects`; nil: the
    /// default project), or nil when no such project is configured.
    func projectID(of project: String?) -> String?

    /// - Parameters:
    ///   - project: a name ``projectID(of:)`` knows; nil: the default project.
    ///   - target: who the message goes to, so a throttled device or topic is backed off on its own.
    func send(_ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool) async -> FCMClient.SendResult

    /// ``send(_:project:to:validateOnly:)`` keeping each attempt in the result's `attemptLog`
    /// (a traced event's); a sender that cannot keeps none.
    func send(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool, recordingAttempts: Bool
    ) async -> FCMClient.SendResult

    /// ``send(_:project:to:validateOnly:recordingAttempts:)`` with no attempt starting at or
    /// after `deadline`, and none outliving it (``FCMClient/send(_:to:validateOnly:recordingAttempts:deadline:)``):
    /// a capped or deduplicated push's send limit. A sender that cannot (a fake in tests)
    /// ignores it.
    func send(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool, recordingAttempts: Bool,
        deadline: ContinuousClock.Instant?
    ) async -> FCMClient.SendResult

    /// ``start(_:project:to:validateOnly:then:)`` keeping each attempt in the result's
    /// `attemptLog`; a sender that cannot keeps none.
    func start(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool, recordingAttempts: Bool,
        then: @escaping @Sendable (FCMClient.FirstAttempt) -> Void
    ) -> Result<Void, FCMClient.StartRefusal>

    /// Begins a send without a task waiting on it, as ``FCMClient/start(_:to:validateOnly:then:)``
    /// does; `then` runs on the sender's thread and must not block. A sender that cannot (a
    /// fake in tests) refuses with `.mustWait`, and the pipeline uses ``send(_:project:to:validateOnly:)``.
    func start(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool,
        then: @escaping @Sendable (FCMClient.FirstAttempt) -> Void
    ) -> Result<Void, FCMClient.StartRefusal>

    /// Returns once `project` has a free send slot, or the task is cancelled (after a `.full`
    /// refusal of ``start(_:project:to:validateOnly:then:)``).
    func waitForRoom(project: String?) async

    /// A sender whose `start` refuses with `.full` must implement this and ``waitForRoom(project:)``
    /// both: the defaults answer at once, and the pipeline would begin the event again at once.
    ///
    /// Runs `action` once `project` has a free send slot (after a `.full` refusal), with no task
    /// waiting: at once if it has one now, else on the thread that frees it, so `action` must
    /// be quick. It returns whether its caller will start again (another send may take the slot
    /// first); false passes the room to whoever asked next.
    func whenRoom(project: String?, _ action: @escaping @Sendable () -> Bool)

    /// How many projects this sender sends for (`fcm.projects`): with more than one, an event
    /// whose project has no free slot must not hold up the others' events.
    var projectCount: Int { get }

    /// Sends that may be in flight now (FCM's answer times decide it for ``FCMClient``): how
    /// many events the pipeline processes at once.
    var concurrencyLimit: Int { get }

    /// Caps `project`'s sends at this worker's share of that project's rate (nil: no share; a
    /// configured per-worker cap still holds).
    func setProjectShare(_ project: String, sendsPerSecond: Double?)
}

extension PushSending {
    public func send(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool, recordingAttempts: Bool
    ) async -> FCMClient.SendResult {
        await send(message, project: project, to: target, validateOnly: validateOnly)
    }

    public func send(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool, recordingAttempts: Bool,
        deadline: ContinuousClock.Instant?
    ) async -> FCMClient.SendResult {
        await send(message, project: project, to: target, validateOnly: validateOnly, recordingAttempts: recordingAttempts)
    }

    public func start(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool, recordingAttempts: Bool,
        then: @escaping @Sendable (FCMClient.FirstAttempt) -> Void
    ) -> Result<Void, FCMClient.StartRefusal> {
        start(message, project: project, to: target, validateOnly: validateOnly, then: then)
    }

    /// Never begins a send: ``send(_:project:to:validateOnly:)`` carries them all.
    public func start(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool,
        then: @escaping @Sendable (FCMClient.FirstAttempt) -> Void
    ) -> Result<Void, FCMClient.StartRefusal> {
        .failure(.mustWait)
    }

    public func waitForRoom(project: String?) async {}

    public func whenRoom(project: String?, _ action: @escaping @Sendable () -> Bool) { _ = action() }

    public var projectCount: Int { 1 }
}

/// Users' devices, for `user` targets: the device registry, or a fake in tests.
public protocol DeviceDirectory: Sendable {
    /// Every device registered for `user` (none: an empty list); throws when the registry
    /// cannot be read.
    func devices(ofUser user: String) throws -> [UserDevice]
    /// `user`'s devices and preferences (the per-user rules read them); by default their
    /// devices with no preferences.
    func record(ofUser user: String) throws -> UserRecord
    /// FCM says `device` is dead: it leaves `user`'s devices at once (the backend deletes it at
    /// the source from the invalidation record). May wait for the store's writer: never on the
    /// caller's thread if that blocks.
    func drop(_ device: String, ofUser user: String) async
    /// FCM refused a Live Activity push-to-start `token` of one of `user`'s devices: the token
    /// leaves them at once; the device stays.
    func dropPushToStart(_ token: String, ofUser user: String) async
}

extension DeviceDirectory {
    public func record(ofUser user: String) throws -> UserRecord {
        UserRecord(devices: try devices(ofUser: user))
    }
}

/// Writer schemas of Schema Registry records: the registry client, or a fake in tests.
public protocol SchemaSource: Sendable {
    /// The schema `id`, waiting (retrying) for as long as the registry cannot be reached.
    /// - Throws: not found or unreadable (the record is dead-lettered), or cancelled (the
    ///   worker is stopping: the record stays unfinished).
    func schema(id: UInt32) async throws(SchemaLookupError) -> WriterSchema
    /// The schema `id`, or why it cannot be had, when that is known without waiting; nil:
    /// ``schema(id:)`` must wait for it.
    func cachedSchema(id: UInt32) -> Result<WriterSchema, SchemaLookupError>?
}

extension SchemaSource {
    /// Nothing known without waiting.
    public func cachedSchema(id: UInt32) -> Result<WriterSchema, SchemaLookupError>? { nil }
}

/// Writes one record to Kafka and waits until the broker has it.
public protocol RecordProducing: Sendable {
    func send(_ record: KafkaProducerRecord) async throws(KafkaError) -> KafkaDeliveryReport

    /// Writes one record without a task waiting: `then` gets the broker's acknowledgement or the
    /// failure, once, on the producer's thread, and must not block. False (and `then` never
    /// runs): not now, or this producer cannot (the default: a fake in tests); use ``send(_:)``.
    func start(_ record: KafkaProducerRecord, then: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void) -> Bool
}

extension RecordProducing {
    public func start(_ record: KafkaProducerRecord, then: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void) -> Bool {
        false
    }
}

extension KafkaConsumer: MessageSource {
    public func committedOffsets(_ partitions: [TopicPartition]) async throws(KafkaError) -> [TopicPartitionOffset] {
        try await committed(partitions, timeout: .seconds(10))
    }

    public func partitionCount(of topic: String) async throws(KafkaError) -> Int {
        try await self.partitions(of: topic, timeout: .seconds(10)).count
    }
}

extension FCMProjects: PushSending {
    public func projectID(of project: String?) -> String? {
        client(project)?.projectID
    }

    public func send(_ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool) async -> FCMClient.SendResult {
        await send(message, project: project, to: target, validateOnly: validateOnly, recordingAttempts: false)
    }

    public func send(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool, recordingAttempts: Bool
    ) async -> FCMClient.SendResult {
        await send(message, project: project, to: target, validateOnly: validateOnly, recordingAttempts: recordingAttempts, deadline: nil)
    }

    public func send(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool, recordingAttempts: Bool,
        deadline: ContinuousClock.Instant?
    ) async -> FCMClient.SendResult {
        guard let client = client(project) else {
            // The event processor checks the project first (``projectID(of:)``): not reached.
            let error = FCMError(
                code: FCMError.Code(fcm: "UNKNOWN_PROJECT"), kind: .permanent, httpStatus: nil, message: "no project \(project ?? "(default)")")
            return FCMClient.SendResult(outcome: .failure(error), attempts: 0)
        }
        return await client.send(message, to: target, validateOnly: validateOnly, recordingAttempts: recordingAttempts, deadline: deadline)
    }

    public func start(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool,
        then: @escaping @Sendable (FCMClient.FirstAttempt) -> Void
    ) -> Result<Void, FCMClient.StartRefusal> {
        start(message, project: project, to: target, validateOnly: validateOnly, recordingAttempts: false, then: then)
    }

    public func start(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool, recordingAttempts: Bool,
        then: @escaping @Sendable (FCMClient.FirstAttempt) -> Void
    ) -> Result<Void, FCMClient.StartRefusal> {
        // An unknown project: `send` answers it as it always has.
        guard let client = client(project) else { return .failure(.mustWait) }
        return client.start(message, to: target, validateOnly: validateOnly, recordingAttempts: recordingAttempts, then: then)
    }

    public func waitForRoom(project: String?) async {
        await client(project)?.waitForRoom()
    }

    public func whenRoom(project: String?, _ action: @escaping @Sendable () -> Bool) {
        guard let client = client(project) else {
            _ = action()  // an unknown project: begun again, `send` answers it
            return
        }
        client.whenRoom(action)
    }

    public var projectCount: Int { clients.count }

    public func setProjectShare(_ project: String, sendsPerSecond: Double?) {
        clients[project]?.setProjectShare(sendsPerSecond: sendsPerSecond)
    }
}
extension KafkaProducer: RecordProducing {
    /// ``send(_:onDelivery:)``; false when librdkafka refuses the record now (its queue is full,
    /// the producer is closed): the caller's task path waits and retries.
    public func start(_ record: KafkaProducerRecord, then: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void) -> Bool {
        do {
            try send(record, onDelivery: then)
            return true
        } catch {
            return false
        }
    }
}
