import FCM
import Kafka
import Logging
import Mapping
import Pipeline
import Synchronization
import Testing

/// FCM as ``FCMProjects`` is to the pipeline, for sends begun without a task
/// (``FCMClient/start(_:to:validateOnly:then:)``), one or more projects by name (nil: the first,
/// sorted). Per project at most `slots` sends are under way, beyond which `start` refuses as
/// full; a begun send ends when ``answer(_:)`` says so, from the test's own task (as the HTTP/2
/// client's thread would, not the runner's). Room is told to ``whenRoom(project:_:)``'s actions
/// in the order they asked, one per slot freed, the next one along when an action declines, as
/// ``FCMClient/whenRoom(_:)`` does; ``waitForRoom(project:)`` waits in that line, as
/// ``FCMClient/waitForRoom()`` does. By the token's prefix: `retry-` a 503 whose retry (run in
/// a task) is acknowledged, `dead-` UNREGISTERED, anything else acknowledged.
final class AnsweringSender: PushSending {
    private struct Project {
        var pending: [(token: String, then: @Sendable (FCMClient.FirstAttempt) -> Void)] = []
        var begun: [String] = []
        var mostUnderWay = 0
        var roomWaiters: [@Sendable () -> Bool] = []
    }

    private struct State {
        var projects: [String: Project]
        var retried: [String] = []
        var sentByTask = 0
    }

    /// Send slots by project name.
    let slots: [String: Int]
    private let state: Mutex<State>

    init(slots: [String: Int]) {
        self.slots = slots
        state = Mutex(State(projects: slots.mapValues { _ in Project() }))
    }

    /// One project, the default.
    convenience init(slots: Int) { self.init(slots: ["fake": slots]) }

    private func name(_ project: String?) -> String { project ?? slots.keys.sorted()[0] }

    /// Tokens begun, in `project` (nil: all).
    func begun(_ project: String? = nil) -> [String] {
        state.withLock { s in project.map { s.projects[$0]!.begun } ?? s.projects.values.flatMap(\.begun) }
    }
    /// The most sends under way at once in `project` (nil: the default).
    func mostUnderWay(_ project: String? = nil) -> Int { state.withLock { $0.projects[name(project)]!.mostUnderWay } }
    var underWay: Int { state.withLock { $0.projects.values.reduce(0) { $0 + $1.pending.count } } }
    var retried: [String] { state.withLock { $0.retried } }
    var sentByTask: Int { state.withLock { $0.sentByTask } }

    func projectID(of project: String?) -> String? { slots[name(project)] == nil ? nil : name(project) }

    var projectCount: Int { slots.count }

    func start(
        _ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool,
        then: @escaping @Sendable (FCMClient.FirstAttempt) -> Void
    ) -> Result<Void, FCMClient.StartRefusal> {
        let project = name(project)
        return state.withLock { s in
            guard s.projects[project]!.pending.count < slots[project]! else { return .failure(.full) }
            let token = target?.value ?? "?"
            s.projects[project]!.pending.append((token, then))
            s.projects[project]!.begun.append(token)
            s.projects[project]!.mostUnderWay = max(s.projects[project]!.mostUnderWay, s.projects[project]!.pending.count)
            return .success(())
        }
    }

    func whenRoom(project: String?, _ action: @escaping @Sendable () -> Bool) {
        let project = name(project)
        let now = state.withLock { s -> Bool in
            if s.projects[project]!.pending.count < slots[project]! { return true }
            s.projects[project]!.roomWaiters.append(action)
            return false
        }
        if now { _ = action() }
    }

    func waitForRoom(project: String?) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            whenRoom(project: project) {
                waiter.resume()
                return true
            }
        }
    }

    /// FCM answers every send under way now in `project` (nil: in every project); then room
    /// is told, one action per slot freed. Returns how many it answered.
    @discardableResult
    func answer(_ project: String? = nil) -> Int {
        (project.map { [$0] } ?? slots.keys.sorted()).reduce(0) { $0 + answerAll(in: $1) }
    }

    private func answerAll(in project: String) -> Int {
        let answered = state.withLock { s in
            defer { s.projects[project]!.pending = [] }
            return s.projects[project]!.pending
        }
        for (token, then) in answered { then(firstAttempt(token, project: project)) }
        var free = answered.count
        while free > 0,
            let next = state.withLock({ s in s.projects[project]!.roomWaiters.isEmpty ? nil : s.projects[project]!.roomWaiters.removeFirst() })
        {
            if next() { free -= 1 }
        }
        return answered.count
    }

    private func firstAttempt(_ token: String, project: String) -> FCMClient.FirstAttempt {
        let name = "projects/\(project)/messages/\(token)"
        if token.hasPrefix("dead-") {
            let error = FCMError(code: .unregistered, kind: .tokenDead, httpStatus: 404, message: "Requested entity was not found.")
            return .finished(FCMClient.SendResult(outcome: .failure(error), attempts: 1))
        }
        if token.hasPrefix("retry-") {
            return .unfinished { [self] in
                state.withLock { $0.retried.append(token) }
                return FCMClient.SendResult(outcome: .success(name), attempts: 2)
            }
        }
        return .finished(FCMClient.SendResult(outcome: .success(name), attempts: 1))
    }

    /// Only for events that cannot be begun: none in these tests.
    func send(_ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool) async -> FCMClient.SendResult {
        state.withLock { $0.sentByTask += 1 }
        return FCMClient.SendResult(outcome: .success("projects/\(name(project))/messages/x"), attempts: 1)
    }

    var concurrencyLimit: Int { slots.values.reduce(0, +) }

    func setProjectShare(_ project: String, sendsPerSecond: Double?) {}
}

extension AnsweringSender {
    /// The real pipeline (reader, runners, commits) for `mapping`, sending through this sender,
    /// on an in-memory consumer of topic `events` that commits every 20 ms.
    func pipeline(
        mapping: String, producer: FakeProducer = FakeProducer(), group: String, channelCapacity: Int
    ) throws -> (Pipeline, FakeMessageSource) {
        var logger = Logger(label: group)
        logger.logLevel = .critical
        let processor = EventProcessor(
            mappings: try MappingSet.load(files: [("test.yaml", mapping)]), sender: self, producer: producer,
            options: EventProcessor.Options(deadLetterTopic: "dead-letter", tokenInvalidationTopic: "invalidations"), metrics: PipelineMetrics(),
            logger: logger)
        var configuration = Pipeline.Configuration(
            consumer: KafkaConsumerConfiguration(bootstrapServers: ["unused:9092"], groupID: group), topics: ["events"])
        configuration.commitInterval = .milliseconds(20)
        var made: FakeMessageSource?
        let pipeline = try Pipeline(configuration: configuration, processor: processor, metrics: PipelineMetrics(), logger: logger) { handler in
            let source = FakeMessageSource(handler: handler, channelCapacity: channelCapacity)
            made = source
            return source
        }
        return (pipeline, made!)  // the pipeline makes its source as it starts
    }
}
