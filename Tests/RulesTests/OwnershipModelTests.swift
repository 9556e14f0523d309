import Rules
import TestSupport
import Testing

/// Design §8.1's ownership simulation: owners taking a partition in turn through claims, crashes
/// between any two steps, zombies, FCM's three kinds of answer. The invariants are checked in
/// every run (``OwnershipModel``'s `checkWithheld`, `deliver`, `checkWindows`); these tests
/// also require that the runs reached the cases the invariants are about, so a model that
/// never fences, never fills a cap or never crashes in the window cannot pass.
///
/// The runs take a minute of CPU in a debug build: they run on a thread of their own
/// (``offPool(_:)``), not on the test runner's cooperative threads, which the suite's async
/// tests (Kafka rebalances, `eventually` waits) need meanwhile.
@Suite("The ownership model")
struct OwnershipModelTests {
    typealias Config = OwnershipModel<ExhaustiveChooser>.Config

    /// Every interleaving, crash point, rebalance point and FCM answer of a small case.
    static func exhaustive(_ config: Config) -> ModelStats {
        var total = ModelStats()
        var chooser = ExhaustiveChooser()
        repeat {
            var model = OwnershipModel(config, chooser: chooser)
            model.run()
            total.add(model.stats)
            chooser = model.chooser
        } while chooser.advance()
        return total
    }

    static func random(_ config: OwnershipModel<RandomChooser>.Config, runs: Int, seed: UInt64) -> ModelStats {
        var total = ModelStats()
        for run in 0..<UInt64(runs) {
            var model = OwnershipModel(config, chooser: RandomChooser(seed: seed &+ run))
            model.run()
            total.add(model.stats)
        }
        return total
    }

    @Test("exhaustive: crashes anywhere (two), a duplicate event, cap 2, every FCM answer")
    func exhaustiveCrashes() async throws {
        let stats = try await offPool { Self.exhaustive(Config(events: ["e1", "e2", "e1", "e3"], crashes: 2, rebalances: 0)) }
        print("ownership model, exhaustive crashes: \(stats.summary)")
        #expect(stats.violations.prefix(5) == [])
        #expect(stats.truncated == 0)
        #expect(stats.maxInWindow == 2 && stats.withheldCap > 0 && stats.withheldDuplicate > 0 && stats.inDoubt > 0)
        #expect(stats.duplicatesInWindow > 0 && stats.duplicatesAfterLostAnswer > 0)
    }

    @Test("exhaustive: a rebalance anywhere, the zombie running on for 3 steps in every interleaving, cap 1")
    func exhaustiveZombie() async throws {
        let stats = try await offPool {
            var config = Config(events: ["e1", "e2", "e3"], crashes: 0, rebalances: 1, answers: [.accepted, .refused])
            config.cap = CapRule(max: 1, per: 1_000, by: [.user])
            return Self.exhaustive(config)
        }
        print("ownership model, exhaustive zombie: \(stats.summary)")
        #expect(stats.violations.prefix(5) == [])
        #expect(stats.truncated == 0)
        #expect(stats.maxInWindow == 1 && stats.withheldCap > 0 && stats.fenced > 0 && stats.duplicatesInWindow > 0)
    }

    @Test("seeded random: 3 owners' worth of crashes and rebalances, sliding windows, two devices")
    func randomLarge() async throws {
        let stats = try await offPool {
            var config = OwnershipModel<RandomChooser>.Config(events: ["a", "b", "c", "a", "d", "e", "b", "f", "g", "h", "c", "i"])
            config.devices = ["fid:a", "fid:b"]
            config.cap = CapRule(max: 2, per: 25, by: [.user])
            config.dedupWindow = 60
            config.crashes = 2
            config.rebalances = 2
            config.zombieSteps = 6
            return Self.random(config, runs: 5_000, seed: 2026)
        }
        print("ownership model, random: \(stats.summary)")
        #expect(stats.violations.prefix(5) == [])
        #expect(stats.truncated == 0)
        #expect(stats.maxInWindow == 2 && stats.withheldCap > 0 && stats.fenced > 0)
        #expect(stats.duplicatesInWindow > 0 && stats.duplicatesAfterLostAnswer > 0 && stats.inDoubt > 0)
    }

    @Test("the model finds a broken protocol: owners that skip the fencing check overshoot the cap")
    func detectsUnfencedOwners() async throws {
        let stats = try await offPool {
            var config = OwnershipModel<RandomChooser>.Config(events: ["a", "b", "c", "d", "e"])
            config.cap = CapRule(max: 1, per: 1_000, by: [.user])
            config.crashes = 0
            config.zombieSteps = 8
            config.fencing = false
            return Self.random(config, runs: 2_000, seed: 7)
        }
        #expect(stats.violations.contains { $0.contains("delivered in") })
    }
}

extension ModelStats {
    var summary: String {
        "\(runs) runs, \(steps) steps, \(deliveries) deliveries, withheld \(withheldCap) cap / \(withheldDuplicate) duplicate, "
            + "\(fenced) fenced, \(inDoubt) in doubt, same-push duplicates \(duplicatesInWindow) in the window / "
            + "\(duplicatesAfterLostAnswer) after lost answers, violations \(violations.count)"
    }
}
