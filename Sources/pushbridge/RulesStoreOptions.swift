import ArgumentParser
import Dates
import Foundation
import Jobs
import Mapping
import Pipeline

/// `--rules-store PATH` for `render` and `preview`: whether a push of a mapping with `cap` or
/// `dedup` would be withheld, by a worker's rules store (docs/rules.md#caps-and-dedup). Read-only:
/// a worker may be running on it. The decision is the engine's own (``StoredRulesCheck``).
struct RulesStoreOptions: ParsableArguments {
    @Option(
        name: .customLong("rules-store"),
        help: ArgumentHelp(
            "A worker's rules store (its rules.state_path), read-only: whether a push of a mapping with cap or dedup would be withheld, by what it holds.",
            valueName: "path"))
    var path: String?

    /// What becomes of a rendered event by its mapping's `cap` and `dedup`.
    enum Judged {
        /// These messages would be sent (fewer than rendered when some devices already had the push).
        case send([FCMMessage])
        /// Not sent: why, and the rule's code (`duplicate`, `cap`, or `capped` with `over: dead-letter`).
        case withheld(reason: String, code: String)
    }

    /// Judges `rendered` at `now` (ms) when its mapping has `cap` or `dedup`, saying on standard
    /// error what applies (without --rules-store: that the workers' shared state decides).
    func judge(_ rendered: MappingSet.Rendered, set: MappingSet, now: Int64) throws -> Judged {
        guard let mapping = set.stateful(of: rendered.event.type) else { return .send(rendered.messages) }
        let rules = Self.describe(mapping.stateful)
        guard let path else {
            note("\(rules): decided by the workers' shared state (--rules-store PATH reads a worker's)")
            return .send(rendered.messages)
        }
        let check: StoredRulesCheck
        do {
            check = try StoredRulesCheck.check(rendered, mapping: mapping, storePath: path, now: now)
        } catch {
            note("pushbridge: --rules-store \(path): \(error)")
            throw ExitCode(1)
        }
        let window = check.window.map { w in
            let oldest = w.oldestLeavesAt.map { ", the oldest leaves the window at \(RFC3339.format(milliseconds: $0))" } ?? ""
            return "\(w.counted) of \(w.max) counted in the cap's window\(oldest)"
        }
        switch check.verdict {
        case .duplicate:
            let last = check.duplicates.map(\.acknowledgedAt).max().map { ", last at \(RFC3339.format(milliseconds: $0))" } ?? ""
            let reason = "FCM already acknowledged this push to every device within the dedup window\(last) (\(rules))"
            return .withheld(reason: reason, code: "duplicate")
        case .capped:
            let code = mapping.stateful.cap?.over == .deadLetter ? "capped" : "cap"
            return .withheld(reason: "the cap is reached: \(window ?? "full") (\(rules))", code: code)
        case .noTargets:
            return .send([])
        case .send:
            for duplicate in check.duplicates {
                note(
                    "withheld: \(duplicate.target.prefix { $0 != ":" }) …\(duplicate.target.suffix(6)): FCM acknowledged this push at \(RFC3339.format(milliseconds: duplicate.acknowledgedAt)) [duplicate]"
                )
            }
            note("rules store: \(rules)\(window.map { "; \($0)" } ?? ""): would be sent")
            return .send(rendered.messages.filter { check.targets.contains(StatefulPush.target($0.target)) })
        }
    }

    /// `cap 2 per 1h by device, dedup 1h`: a mapping's rules as the mapping file writes them
    /// (the dedup window is the longer of `dedup` and the cap's `per`, which implies it).
    static func describe(_ rules: StatefulRules) -> String {
        var parts: [String] = []
        if let cap = rules.cap {
            let over = cap.over == .deadLetter ? ", over: dead-letter" : ""
            parts.append("cap \(cap.max) per \(EventAge.text(seconds: Int64(cap.per))) by \(cap.by.map(\.rawValue).joined(separator: ", "))\(over)")
        }
        parts.append("dedup \(EventAge.text(seconds: Int64(rules.effectiveDedupWindow)))")
        return parts.joined(separator: ", ")
    }

    private func note(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
