import Dates
import Kafka
import Rules
import Synchronization
import Threading

/// The owner of one state partition of caps and deduplication (docs/rules-state.md; plan
/// step 11 of docs/design/per-user-rules.md). ``RulesEngine`` runs one per partition it holds.
///
/// It follows the partition's changelog (``ChangelogPartition``) into `store`, claims the
/// partition, and once restored takes notifications through their steps
/// (``NotificationAttempt``): the decision over the store and one in-flight table, the
/// reservation written and read back, the send, the outcome written. Its own facts go into the
/// store as soon as Kafka acknowledges them (``RulesStateStore/addPending(_:partition:offset:subjects:)``), so
/// the next decision counts them before the tail reads them back.
///
/// Each run restores from the changelog's start (``RulesStateStore/reset(partition:)``): a
/// claim filters only what comes after it, so state built under an earlier claim may hold too
/// little (docs/rules-state.md, "a re-claim restores from the start").
public final class StatePartitionOwner<Store: RulesStateStore>: Sendable {
    public let changelog: ChangelogPartition
    private let store: Store
    private let clock: @Sendable () -> Int64
    private let flights = Mutex(Flights())
    private let resolved = ChangeSignal()
    /// The partition's digest windows (``DigestBook``), closed by ``closeLoop(_:wall:)``.
    let digests = DigestShelf()
    private let closer: DigestCloser?
    private let wall: any WallClock

    private struct Flights {
        var table = InFlightTable()
        var nextWaiter: InFlightTable.Waiter = 0
        /// Waiters not woken yet.
        var parked: Set<InFlightTable.Waiter> = []
    }

    /// - Parameters:
    ///   - owner: this member's owner ID for its claim and facts (member, generation, a nonce).
    ///   - clock: milliseconds since 1970 (the facts' times).
    ///   - closer: sends a digest window's push at its end; nil: no mapping digests.
    ///   - wall: the clock the close loop waits by (the worker's, a test clock in tests).
    public init(
        _ configuration: ChangelogPartition.Configuration, owner: String, producer: KafkaProducer, store: Store,
        clock: @escaping @Sendable () -> Int64, closer: DigestCloser? = nil, wall: any WallClock = SystemWallClock()
    ) {
        let partition = configuration.partition
        let digests = self.digests
        changelog = ChangelogPartition(configuration, owner: owner, producer: producer) { facts in
            digests.apply(facts)
            try store.apply(partition: partition, facts: facts)
        }
        self.store = store
        self.clock = clock
        self.closer = closer
        self.wall = wall
    }

    public var owner: String { changelog.owner }
    private var partition: Int32 { changelog.configuration.partition }

    /// Events waiting here for a notification in flight to resolve.
    public var waiting: Int { flights.withLock { $0.table.waiterCount } }

    /// Empties the partition's state, follows its changelog from the start, claims it and, once
    /// restored, runs `body`; stops following when `body` returns. Throws what the store, the
    /// follower or `body` throws.
    public func run<R: Sendable>(_ body: @escaping @Sendable (StatePartitionOwner) async throws -> R) async throws -> R {
        try store.reset(partition: partition)
        digests.reset()
        return try await withThrowingTaskGroup(of: R?.self) { group in
            group.addTask {
                try await self.changelog.follow(from: 0)
                return nil
            }
            if let closer {
                group.addTask {
                    // Windows are closed from the restored state only.
                    guard await self.changelog.waitUntilRestored() else { return nil }
                    await self.closeLoop(closer, wall: self.wall)
                    return nil
                }
            }
            group.addTask {
                try await self.changelog.claim(at: self.clock())
                guard await self.changelog.waitUntilRestored() else { throw CancellationError() }
                return try await body(self)
            }
            // The first to end decides: `body`'s result, or the follower's failure.
            while let ended = try await group.next() {
                if let result = ended {
                    group.cancelAll()
                    return result
                }
            }
            throw CancellationError()
        }
    }

    public typealias Outcome = StatefulOutcome

    /// Takes `attempt` through its steps, calling `send` with its targets and the last instant
    /// (ms) a push or a retry may go out, for FCM's answers. Waits while it must (a notification
    /// or a cap's pushes in flight here). Throws what Kafka or the store throws; the
    /// notification is no longer in flight here then (an unresolved reservation it may have
    /// written counts until its send limit).
    public func push(
        _ attempt: NotificationAttempt, send: @Sendable (_ targets: [String], _ until: Int64) async -> [String: PushAnswer]
    ) async throws -> Outcome {
        var attempt = attempt
        attempt.owner = owner
        while true {
            let now = clock()
            let decision = try flights.withLock { flights throws(Store.Failure) in
                try attempt.decide(now: now, state: store, inFlight: &flights.table)
            }
            switch decision {
            case .wait(let wait):
                try await park(wait)
            case .duplicate: return .duplicate
            case .capped(let key, let counted): return .capped(key: key, counted: counted)
            case .settle(let facts):
                for fact in facts { _ = try await write(fact, of: attempt) }
                return .settled(facts)
            case .reserve(let reservation):
                do {
                    return try await sendReserved(&attempt, reservation, send: send)
                } catch {
                    finish(attempt.notification)
                    throw error
                }
            }
        }
    }

    private func sendReserved(
        _ attempt: inout NotificationAttempt, _ reservation: NotificationFact,
        send: @Sendable ([String], Int64) async -> [String: PushAnswer]
    ) async throws -> Outcome {
        let offset = try await write(reservation, of: attempt)
        attempt.reserved(at: offset)
        guard let tail = await changelog.tail(pastOffset: offset) else { throw CancellationError() }
        let outcome: NotificationFact
        switch try attempt.readBack(tail, now: clock(), state: store) {
        case .notYet: preconditionFailure("the tail has read past the reservation")
        case .fenced(let claim):
            finish(attempt.notification)
            return .fenced(byClaimAt: claim)
        case .release(let released): outcome = released
        case .send:
            let answers = await send(attempt.targets, attempt.sendDeadline ?? 0)
            let now = clock()
            outcome = attempt.answered(answers, deliveredBy: now, now: now)
        }
        _ = try await write(outcome, of: attempt)
        flights.withLock { flights in
            for waiter in attempt.recorded(in: &flights.table) { flights.parked.remove(waiter) }
        }
        resolved.notify()
        return .recorded(outcome)
    }

    /// Writes one of this owner's facts of `attempt` and counts it in the store at once: the
    /// offset of its record.
    private func write(_ fact: NotificationFact, of attempt: NotificationAttempt) async throws -> Int64 {
        let offset = try await changelog.write(fact)
        try store.addPending(fact, partition: partition, offset: offset, subjects: attempt.possibleSubjects)
        return offset
    }

    /// Waits until what `wait` names resolves (at once if it already has).
    private func park(_ wait: InFlightTable.Wait) async throws {
        let waiter: InFlightTable.Waiter? = flights.withLock { flights in
            let waiter = flights.nextWaiter
            flights.nextWaiter += 1
            guard flights.table.wait(waiter, for: wait).isEmpty else { return nil }
            flights.parked.insert(waiter)
            return waiter
        }
        guard let waiter else { return }
        let woken = await resolved.wait { flights.withLock { !$0.parked.contains(waiter) } }
        if !woken {
            flights.withLock { flights in
                flights.table.cancel(waiter)
                flights.parked.remove(waiter)
            }
            throw CancellationError()
        }
    }

    /// `notification` is no longer in flight here; its waiters decide again.
    private func finish(_ notification: NotificationID) {
        flights.withLock { flights in
            for waiter in flights.table.finish(notification) { flights.parked.remove(waiter) }
        }
        resolved.notify()
    }
}

/// How a notification ended at the owner of its state partition.
public enum StatefulOutcome: Hashable, Sendable {
    /// Sent (or released unsent at its read-back): the outcome fact written.
    case recorded(NotificationFact)
    case duplicate
    case capped(key: CapKey, counted: Int)
    /// No targets: these facts settled earlier attempts (``NotificationAttempt/Decision/settle(_:)``).
    case settled([NotificationFact])
    /// Another member claimed the partition: nothing was sent.
    case fenced(byClaimAt: Int64)
}
