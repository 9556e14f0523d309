import Foundation
import Threading

/// A task executor with one thread of its own, for tests that wait on the clock while their
/// tasks take many turns.
///
/// Every test in the process shares Swift's cooperative pool (a thread per CPU, 2 on CI), and
/// its queue is first come, first served: in the first ~45 s of a full run hundreds of tests
/// wait in it, and a task that suspends (a `Task.sleep`, a continuation resumed by another
/// thread) waits behind all of them each time it resumes. A pipeline scenario that needs a
/// handful of such turns to fill its worker missed its 20 s `eventually` that way, in full runs
/// only. Its tasks run here instead:
///
/// ```swift
/// try await withTaskExecutorPreference(ThreadExecutor.scenarios) {
///     let run = Task(executorPreference: ThreadExecutor.scenarios) { try await pipeline.run() }
///     #expect(await eventually { … })   // child tasks inherit the preference
/// }
/// ```
///
/// Unstructured tasks do not inherit a preference (SE-0417), hence the `Task(executorPreference:)`.
/// Jobs run in the order they arrive; a job that blocks holds up the others, as on the pool.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// Shared by the pipeline scenario suites, which run one test at a time.
    public static let scenarios = ThreadExecutor(name: "pb.test.exec")

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []

    /// Starts the executor's thread, which runs for the rest of the process.
    public init(name: String) {
        _ = DedicatedThread.start(name: name) { [self] in run() }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
