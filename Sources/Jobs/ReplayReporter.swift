import Kafka
import Mapping
import Pipeline

/// What a ``ReplayJob`` tells as it goes; `pushbridge replay` prints it. Called from the job's
/// tasks (``rendered(_:_:)`` from several at once); each call returns at once.
public protocol ReplayReporter: Sendable {
    /// The plan, before anything is read.
    func planned(_ plan: ReplayPlan)
    /// A replay that sends: the FCM clients are set up, and their access tokens are fetched next.
    func fcmClientsReady()
    /// Every few seconds while the replay reads and its events finish.
    func progress(_ progress: ReplayProgress, elapsedSeconds: Double)
    /// A dry run rendered `message`, or says why it cannot be rendered.
    func rendered(_ message: KafkaMessage, _ result: Result<MappingSet.Rendered, MappingFailure>)
    /// A graceful shutdown began: the reading stops, the events in flight finish.
    func stopping()
}

extension ReplayReporter {
    public func planned(_ plan: ReplayPlan) {}
    public func fcmClientsReady() {}
    public func progress(_ progress: ReplayProgress, elapsedSeconds: Double) {}
    public func rendered(_ message: KafkaMessage, _ result: Result<MappingSet.Rendered, MappingFailure>) {}
    public func stopping() {}
}
