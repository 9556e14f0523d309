import Pipeline
import Testing

/// The split of `fcm.project_sends_per_second` across a group, without I/O.
@Suite("ProjectQuotaShare: the project's rate split by partitions held")
struct ProjectQuotaShareTests {
    let quota = ProjectQuotaShare(projectSendsPerSecond: 9_600)

    @Test("a share is the rate × partitions held ÷ all partitions")
    func proportional() {
        #expect(quota.sendsPerSecond(owned: 12, total: 12) == 9_600)
        #expect(quota.sendsPerSecond(owned: 4, total: 12) == 3_200)
        #expect(quota.sendsPerSecond(owned: 1, total: 12) == 800)
    }

    @Test("however the partitions are dealt out, the shares add up to the rate, never more", arguments: [1, 2, 3, 5, 7, 12, 13])
    func sharesAddUp(workers: Int) {
        let total = 12
        // Round-robin, as the assignors deal them; with more workers than partitions some get none.
        let owned = (0..<workers).map { w in (0..<total).filter { $0 % workers == w }.count }
        let shares = owned.filter { $0 > 0 }.compactMap { quota.sendsPerSecond(owned: $0, total: total) }
        #expect(abs(shares.reduce(0, +) - 9_600) < 1e-6, "\(owned)")
    }

    @Test("holding none keeps one partition's worth, not zero; an unknown total gives no share")
    func edges() {
        #expect(quota.sendsPerSecond(owned: 0, total: 12) == 800)
        #expect(quota.sendsPerSecond(owned: 3, total: 0) == nil)
        #expect(quota.sendsPerSecond(owned: 20, total: 12) == 9_600, "never above the rate")
    }
}
