import Kafka
import Synchronization
import Threading

/// What a run does that differs between a worker (``Pipeline``) and a ``Replay``:
/// ``DeliveryEngine`` calls it from the reader, the runners and the background task.
protocol EngineWork: Sendable {
    associatedtype Messages: AsyncSequence<KafkaMessage, KafkaError>

    var messages: Messages { get }
    /// A message was read. `process`: queue it for a runner. `waitForRoom`: the bound of events
    /// in flight is reached; ``waitForRoom()`` before reading on.
    func admit(_ message: KafkaMessage) -> (process: Bool, waitForRoom: Bool)
    /// Returns when events in flight are below the bound again, or the task is cancelled.
    func waitForRoom() async
    /// A runner processes an admitted message, and records how it ended; or begins it and
    /// returns, and its end comes later, with what needs a task handed to the runner's
    /// ``RunnerHandle/later(_:)``.
    func process(_ message: KafkaMessage, runner: RunnerHandle) async
    /// The source failed; the run ends with `reason` (the engine records it).
    func readFailed(_ error: any Error)
    /// Runs beside the read until cancelled: commits on their interval, progress reports, a
    /// timer engine's releases (handed to runners through `runner`).
    func background(_ runner: RunnerHandle) async
    /// Waits until no admitted event is in flight, or `deadline` passes (then says what is left).
    func drain(until deadline: ContinuousClock.Instant) async
    /// `count` admitted events were dropped from the queue without being started: never
    /// finished, so nothing is committed past them.
    func dropped(_ count: Int)
    /// Commits what is done and closes the source.
    func close() async
}

/// What a runner's event may ask of the engine: a runner for the rest of an event begun
/// without a task (``later(_:)``), and another runner while this one waits on its event
/// (``waiting(_:)``).
struct RunnerHandle: Sendable {
    fileprivate let queue: EventQueue
    fileprivate let waitingRunners: WaitingRunners
    fileprivate let requestRunner: @Sendable () -> Void
    fileprivate let dropped: @Sendable () -> Void

    /// Runs `rest` in one of the engine's runners, ahead of the events waiting. Dropped (its
    /// event unfinished, never committed past) once the run has ended.
    func later(_ rest: @escaping @Sendable () async -> Void) {
        switch queue.pushRest(rest) {
        case true?: requestRunner()
        case false?: break
        case nil: dropped()
        }
    }

    /// Runs `body`, in which the runner waits on its event (a send, a retry's backoff, a
    /// record's write), counted as waiting: the runner limit may allow one more runner for the
    /// events behind it, which starts now if events wait.
    func waiting<T>(_ body: () async -> T) async -> T {
        waitingRunners.count.add(1, ordering: .relaxed)
        claimAnother()
        let result = await body()
        waitingRunners.count.subtract(1, ordering: .relaxed)
        return result
    }

    /// Another runner starts if events wait and the limit allows.
    fileprivate func claimAnother() {
        if queue.claimRunner() { requestRunner() }
    }
}

/// Runners waiting on their event (``RunnerHandle/waiting(_:)``), which the runner limit is given.
final class WaitingRunners: Sendable {
    let count = Atomic<Int>(0)
}

/// The lifecycle every run shares (``EngineLifecycle``), executed: a reader, runners that take
/// its events from an ``EventQueue``, and a background task, all children of one task group
/// inside ``run(_:)``; then the drain, the close.
///
/// Cancelling the task that runs it cancels them all: the reader takes nothing more, runners
/// stop after their event (sends under way end as abandoned), and what finished is committed
/// before the source closes. Waits are signals (``ChangeSignal``), never polls.
final class DeliveryEngine: Sendable {
    /// Why ``run(_:)`` could not start.
    struct AlreadyRan: Error {}

    private let lifecycle = Mutex(EngineLifecycle())
    /// Notified when the reader should end (stop, failure).
    private let readEnd = ChangeSignal()
    let queue: EventQueue
    let shutdownTimeout: Duration
    private let waitingRunners: WaitingRunners

    /// - Parameters:
    ///   - maxRunners: runners at most, however many events wait on something in one.
    ///   - runnerLimit: runners wanted now, given how many of them wait on their event
    ///     (``RunnerHandle/waiting(_:)``).
    ///   - shutdownTimeout: how long events in flight may take once the read ended.
    init(maxRunners: Int, runnerLimit: @escaping @Sendable (_ waiting: Int) -> Int, shutdownTimeout: Duration) {
        let waiting = WaitingRunners()
        self.waitingRunners = waiting
        self.queue = EventQueue(maxRunners: maxRunners) { runnerLimit(waiting.count.load(ordering: .relaxed)) }
        self.shutdownTimeout = shutdownTimeout
    }

    /// The reader takes no more messages; events in flight finish (up to the shutdown timeout).
    func stop() {
        if lifecycle.withLock({ $0.requestStop() }) == .stopReading { readEnd.notify() }
    }

    /// Ends the run as ``stop()`` does, and the run reports `reason` (the first one given).
    func fail(_ reason: String) {
        if lifecycle.withLock({ $0.fail(reason) }) == .stopReading { readEnd.notify() }
    }

    var failure: String? { lifecycle.withLock { $0.failure } }
    var isReading: Bool { lifecycle.withLock { $0.isReading } }
    var phase: EngineLifecycle.Phase { lifecycle.withLock { $0.phase } }
    private var readingEnds: Bool { lifecycle.withLock { $0.readingEnds } }

    /// Reads, processes and drains `work`, then closes it. Once per engine.
    func run(_ work: some EngineWork) async throws(AlreadyRan) {
        guard lifecycle.withLock({ $0.start() }) else { throw AlreadyRan() }
        await withDiscardingTaskGroup { group in
            // The reader, and events' rests, ask for a runner by a yield (the group is the
            // body's to add to); until the drain ends, as rests come while events finish.
            let (runnerRequests, requestRunner) = AsyncStream<Void>.makeStream()
            let runner = RunnerHandle(
                queue: queue, waitingRunners: waitingRunners, requestRunner: { requestRunner.yield() }, dropped: { work.dropped(1) })
            group.addTask { await work.background(runner) }
            group.addTask {
                await self.readUntilEnded(work) { requestRunner.yield() }
                self.lifecycle.withLock { $0.readEnded() }
                await work.drain(until: .now + self.shutdownTimeout)
                // Idle runners get nil; busy ones (only if not drained) are cancelled: no new
                // attempts or records for their events, which are left unfinished.
                work.dropped(self.queue.close())
                self.lifecycle.withLock { $0.drainEnded() }
                requestRunner.finish()
            }
            for await _ in runnerRequests {
                group.addTask { await self.runEvents(work, runner) }
            }
            group.cancelAll()
        }
        await work.close()
        lifecycle.withLock { $0.closed() }
    }

    /// Reads until ``stop()`` or ``fail(_:)`` (which cancel the read), or the source's end.
    private func readUntilEnded(_ work: some EngineWork, requestRunner: @escaping @Sendable () -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.read(work, requestRunner: requestRunner) }
            group.addTask { _ = await self.readEnd.wait { self.readingEnds } }
            await group.next()
            group.cancelAll()
        }
    }

    private func read(_ work: some EngineWork, requestRunner: @Sendable () -> Void) async {
        do {
            for try await message in work.messages {
                // Ended or cancelled: messages still buffered are not taken. Not admitted, so
                // not tracked: no commit passes them, and the next reader reads them again.
                if Task.isCancelled || readingEnds { break }
                let admission = work.admit(message)
                if admission.process, queue.push(message) { requestRunner() }
                // Messages fetched before a pause still arrive: at the bound, read no more until
                // events finish (woken by a signal; the end of the read cancels the wait).
                if admission.waitForRoom { await work.waitForRoom() }
            }
        } catch {
            fail("kafka: \(error)")
            work.readFailed(error)
        }
    }

    /// A runner: takes events from the queue until it is closed, or the runner is cancelled;
    /// asks for another runner when the queue wants one (``EventQueue/claimRunner()``).
    private func runEvents(_ work: some EngineWork, _ runner: RunnerHandle) async {
        while let item = await queue.next() {
            runner.claimAnother()
            switch item {
            case .event(let message): await work.process(message, runner: runner)
            case .rest(let rest): await runner.waiting(rest)
            }
            if Task.isCancelled { return }
        }
    }
}
