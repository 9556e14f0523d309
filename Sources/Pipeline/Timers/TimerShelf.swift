import Kafka
import Synchronization
import Threading

/// A timer record read and waiting for its wake: the message, and the timer it carries.
struct WaitingTimer: Sendable {
    let message: KafkaMessage
    let timer: TimerRecord
}

/// The timer engine's ``TimerWaits`` behind a lock, and the signals its changes wake: the
/// release loop (``wakeChanged``) when a record comes due before the wake it sleeps for, and
/// drains (the coordinator's `drained`) when a record is counted as abandoned. The rebalance
/// handler gives revoked partitions' waiting records up through it (``AbandonsOnRevoke``).
final class TimerShelf: AbandonsOnRevoke {
    private let state: Mutex<TimerWaits<WaitingTimer>>
    /// The timer topic: its partitions are the only ones tracked here.
    let topic: String
    /// Notified when ``TimerWaits/armed`` moves earlier.
    let wakeChanged = ChangeSignal()
    /// Notified when a record is counted as abandoned (drains wait for that count).
    private let drained: ChangeSignal

    init(topic: String, window: Int, drained: ChangeSignal) {
        self.topic = topic
        self.state = Mutex(TimerWaits(window: window))
        self.drained = drained
    }

    private func numbers(_ partitions: [TopicPartition]) -> [Int32] {
        partitions.filter { $0.topic == topic }.map(\.partition)
    }

    func admit(_ waiting: WaitingTimer, wake: Int64) -> TimerWaits<WaitingTimer>.Admission {
        let admission = state.withLock { $0.admit(waiting, partition: waiting.message.partition, offset: waiting.message.offset, wake: wake) }
        switch admission {
        case .waiting(let wakeLoop): if wakeLoop { wakeChanged.notify() }
        case .abandoned, .outOfOrder, .full: drained.notify()
        }
        return admission
    }

    func ripe(at now: Int64) -> (items: [WaitingTimer], nextWake: Int64?) { state.withLock { $0.ripe(at: now) } }

    var armed: Int64? { state.withLock { $0.armed } }

    var count: Int { state.withLock { $0.count } }

    func assigned(_ partitions: [TopicPartition]) {
        state.withLock { $0.assigned(numbers(partitions)) }
    }

    func abandon(_ partitions: [TopicPartition]) {
        state.withLock { $0.abandon(numbers(partitions)) }
        drained.notify()
    }

    /// A released record of `partition` that did not finish: drains stop waiting for it.
    func gaveUp(partition: Int32) {
        state.withLock { $0.gaveUp(partition: partition) }
        drained.notify()
    }

    func abandoned(_ partitions: [TopicPartition]) -> Int {
        state.withLock { $0.abandoned(numbers(partitions)) }
    }
}
