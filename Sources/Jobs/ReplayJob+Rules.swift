import Kafka
import Mapping
import Operations

// Events of mappings with `cap` or `dedup` in a replay (docs/rules.md#caps-and-dedup, docs/replay.md):
// the replay has no share of the workers' rules state, so it does not decide them. In re-key
// mode it writes them to the by-subject topic exactly as the workers' stage 1 does, and the
// workers' rules stage withholds what FCM already acknowledged and what a cap refuses; in direct
// mode it cannot route them, so it refuses; told to (`--ignore-caps-and-dedup`), it sends them
// itself as any other event.
extension ReplayJob {
    /// What a replay does with events of mappings with `cap` or `dedup`.
    public enum CapsAndDedup: Sendable, Equatable {
        /// Hand them to the workers' rules stage (re-key mode); refuse the replay in direct mode.
        case rulesStage
        /// Send them as any other event: cap and dedup do not apply, and the workers do not count
        /// these sends (`pushbridge replay --ignore-caps-and-dedup`).
        case ignore
    }

    /// Where the selected events of mappings with `cap` or `dedup` go.
    public enum StatefulRouting: Sendable, Equatable {
        /// No selected event type has `cap` or `dedup`.
        case none
        /// Written to this by-subject topic: the workers' rules stage decides and sends them.
        case rulesStage(topic: String, eventTypes: [String])
        /// Sent by the replay, cap and dedup not applied: asked for, or validate-only sends
        /// (FCM delivers nothing, so nothing needs withholding).
        case direct(eventTypes: [String])

        /// The by-subject topic, when they are handed to the rules stage.
        public var topic: String? {
            if case .rulesStage(let topic, _) = self { topic } else { nil }
        }
    }

    /// Where `request`'s events of mappings with `cap` or `dedup` go, by the config's
    /// `rules.source.keyed_by`.
    /// - Throws: ``Failure`` (bad input) in direct mode (`keyed_by: user`) when the replay would
    ///   have to decide them: the workers decide them where they read the source, which a replay
    ///   cannot write to without reordering it.
    public static func statefulRouting(settings: PushbridgeConfig, mappings: MappingSet, request: Request) throws(Failure) -> StatefulRouting {
        let types = mappings.eventTypes.filter {
            mappings.stateful(of: $0) != nil && (request.eventTypes.isEmpty || request.eventTypes.contains($0))
        }
        guard !types.isEmpty else { return .none }
        if request.capsAndDedup == .ignore || request.sending == .validateOnly { return .direct(eventTypes: types) }
        guard settings.rules.keyedBy != .user else {
            let list = types.joined(separator: ", ")
            throw Failure(
                kind: .badInput,
                description: """
                    \(list) \(types.count == 1 ? "has" : "have") cap or dedup, and rules.source.keyed_by is user: the workers decide \
                    them where they read the source, and a replay cannot hand them over. Replay them with --ignore-caps-and-dedup to \
                    send them directly (pushes FCM already acknowledged go again, caps are not held), or leave them out with \
                    --event-type (docs/replay.md)
                    """)
        }
        return .rulesStage(topic: settings.rules.bySubject(group: settings.kafka.group), eventTypes: types)
    }

    /// Refuses the replay when `topic`, the by-subject topic the workers' rules stage reads, does
    /// not exist: the workers create nothing, and without it no event handed over is decided.
    static func checkRulesStage(_ topic: String, _ consumer: KafkaConsumer) async throws {
        do {
            _ = try await consumer.partitions(of: topic)
        } catch let error as KafkaError where error.code == .unknownTopicOrPartition {
            throw Failure(
                kind: .badInput,
                description: """
                    the rules stage's topic \(topic) (rules.by_subject_topic) does not exist: the workers of this config read it to \
                    decide events of mappings with cap or dedup, so this replay would hand them to nobody. Create it as docs/rules.md \
                    says (as many partitions as the rules changelog), or replay with --ignore-caps-and-dedup to send them directly
                    """)
        }
    }

    /// Checks that the timer topic a replay with `--rearm-timers` writes to exists with the
    /// partitions the workers' layout needs (they would refuse to start on another).
    static func checkTimerTopic(_ settings: PushbridgeConfig, _ consumer: KafkaConsumer) async throws {
        let topic = settings.timers.topic(group: settings.kafka.group)
        let expected = Int(Delivery.timerLayout(settings).partitionCount)
        let count: Int
        do {
            count = try await consumer.partitions(of: topic).count
        } catch let error as KafkaError where error.code == .unknownTopicOrPartition {
            throw Failure(kind: .badInput, description: "the timer topic \(topic) (timers.topic) does not exist: --rearm-timers writes to it")
        }
        guard count == expected else {
            throw Failure(
                kind: .badInput,
                description: "the timer topic \(topic) has \(count) partitions; timers.levels × timers.buckets = \(expected), as the workers need")
        }
    }
}
