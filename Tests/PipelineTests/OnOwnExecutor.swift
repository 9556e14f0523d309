import TestSupport
import Testing

/// Runs each test of a suite, and the tasks it starts with ``start(_:)``, on
/// ``ThreadExecutor/scenarios`` instead of the cooperative pool (``ThreadExecutor`` says why).
struct OnOwnExecutor: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(ThreadExecutor.scenarios) { try await function() }
    }

    /// An unstructured task on the same executor (unstructured tasks do not inherit it).
    static func start<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Task<T, any Error> {
        Task(executorPreference: ThreadExecutor.scenarios) { try await body() }
    }
}

extension Trait where Self == OnOwnExecutor {
    /// Each test's tasks on a thread of their own (``OnOwnExecutor``).
    static var onOwnExecutor: Self { OnOwnExecutor() }
}
