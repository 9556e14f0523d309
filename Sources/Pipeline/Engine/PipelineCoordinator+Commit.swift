import EventTracing
import Kafka
import Logging

/// Commits and drains, shared by the commit loop, the rebalance handler and the final commit.
extension PipelineCoordinator {
    enum CommitResult {
        case committed
        /// Nothing new to commit (events done since the last one may wait behind an unfinished one).
        case nothing
        case failed
    }

    /// Commits what is done in `partitions` (all if nil) through `source`, and waits for the
    /// broker. Failures are logged as an incident (`log`): a broker down fails a commit a second.
    @discardableResult
    func commit(
        _ partitions: [TopicPartition]?, through source: any MessageSource, metrics: PipelineMetrics, log: LogSummary,
        tracer: PushTracer? = nil
    ) async
        -> CommitResult
    {
        let offsets = pendingCommits(for: partitions)
        guard !offsets.isEmpty else { return .nothing }
        do {
            try await source.commit(offsets)
            for (p, committed, uncommitted) in committed(offsets) {
                metrics.partition(p, committed: committed, uncommitted: uncommitted)
            }
            tracer?.committed(offsets)
            log.logger.debug("committed", metadata: ["offsets": "\(offsets.map(\.description).joined(separator: ","))"])
            return .committed
        } catch {
            // Not fatal: the next commit carries the same or a later offset. Until one is
            // acknowledged, the worker takes only so many new events (PartitionTable.isFull).
            commitFailed()
            metrics.commitErrors.increment()
            log.log(
                .warning, "commit failed; will retry", kind: "commit",
                metadata: ["error": "\(error)", "offsets": "\(offsets.map(\.description).joined(separator: ","))"])
            return .failed
        }
    }

    /// Waits until no event of `partitions` (all if nil) is in flight but the `abandoned` ones
    /// (which never finish here: a timer engine's records that waited for their release): true;
    /// false when `timeout` passes first, or the waiting task is cancelled.
    func waitUntilDrained(_ partitions: [TopicPartition]?, timeout: Duration, abandoned: () -> Int = { 0 }) async -> Bool {
        await drained.wait(until: .now + timeout) {
            (partitions.map { inFlight($0) } ?? inFlight) <= abandoned()
        }
    }

    /// Calls `commit` every `interval`, and sooner when `commitEveryEvents` events finished
    /// (woken by ``commitBecameDue``, not polling). After a commit that failed, or that found
    /// nothing to commit while events wait behind an unfinished one, the next comes at the
    /// interval: "due" would hold at once again, and commits would follow each other unpaced.
    func commitLoop(every interval: Duration, commit: () async -> CommitResult) async {
        var paced = false
        while !Task.isCancelled {
            let next = ContinuousClock.now + interval
            if paced {
                try? await Task.sleep(until: next)
            } else {
                _ = await commitBecameDue.wait(until: next) { commitDue }
            }
            if Task.isCancelled { return }
            paced = await commit() != .committed
        }
    }
}
