/// Whether `condition` holds within `timeout`, asked every `interval`: for a test that waits on
/// another process or a state it can only look at (a metric, a committed offset). A test that
/// can be told, by a gate, a continuation or a status stream, waits for that instead.
public func eventually(
    timeout: Duration = .seconds(60), every interval: Duration = .milliseconds(50), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
