/// This worker's share of the project's FCM send rate (`fcm.project_sends_per_second`): the
/// project's rate × the partitions it holds ÷ the partitions of the topics it consumes.
///
/// Each partition has one owner at a time (a revoked partition is drained and let go before
/// its next owner gets it), so the members' shares never add up to more than the project's
/// rate, however many workers run, and add up to all of it when every partition is owned: N
/// workers stay under the quota without a per-worker cap worked out by hand for the most
/// workers that may ever run. The split assumes events spread evenly over partitions; a worker
/// holding hot partitions falls behind at its share rather than take another's. Pure.
public struct ProjectQuotaShare: Sendable, Equatable {
    /// The project's rate to split: sends a second, for the whole group.
    public var projectSendsPerSecond: Double

    public init(projectSendsPerSecond: Double) {
        self.projectSendsPerSecond = projectSendsPerSecond
    }

    /// The share for `owned` partitions of `total`; nil when `total` is unknown (0). A worker
    /// holding none keeps one partition's worth: it sends nothing, and a cap of zero would
    /// stall what it still has to finish.
    public func sendsPerSecond(owned: Int, total: Int) -> Double? {
        guard total > 0 else { return nil }
        return projectSendsPerSecond * Double(min(max(owned, 1), total)) / Double(total)
    }
}
