import ArgumentParser
import Dates
import Foundation
import JSON
import Jobs
import Kafka
import Mapping
import Pipeline

/// `pushbridge replay`'s output: the plan, the progress and the stop on standard error; a dry
/// run's rendered messages (with `--print`) and the summary on standard output.
struct ReplayOutput: ReplayReporter {
    let topic: String
    let sending: ReplayJob.Request.Sending
    let ignoreMaxAge: Bool
    /// `--print`: each rendered message as a JSON line.
    let printRendered: Bool
    /// Where events of mappings with `cap` or `dedup` go.
    let routing: ReplayJob.StatefulRouting
    /// The egress proxy the FCM clients use (`fcm.proxy`, as it is safe to print), if any.
    let proxy: String?
    /// Where pushes due later go (`--rearm-timers`); nil: they are skipped, `timer_not_armed`.
    let timerTopic: String?

    func planned(_ plan: ReplayPlan) {
        let what = sending == .dryRun ? "dry run (nothing is sent)" : sending == .validateOnly ? "validate-only sends" : "sending"
        stderr("replay: \(topic), \(ReplayProgress.grouped(plan.total)) offsets, \(what)\(ignoreMaxAge ? ", max_age ignored" : "")")
        for range in plan.ranges {
            stderr("  partition \(range.partition.partition): \(range.start) ..< \(range.end) (\(ReplayProgress.grouped(range.count)))")
            for note in range.notes { stderr("    \(note)") }
        }
        switch routing {
        case .none: break
        case .rulesStage(let topic, let types):
            let list = types.joined(separator: ", ")
            stderr("  \(list) (cap or dedup): handed to the workers' rules stage through \(topic); they withhold duplicates and what the caps refuse")
        case .direct(let types):
            let why = sending == .validateOnly ? "validate-only: nothing is delivered" : "--ignore-caps-and-dedup"
            stderr("  \(types.joined(separator: ", ")) (cap or dedup): sent directly, cap and dedup not applied (\(why))")
        }
        if let timerTopic {
            stderr(
                "  pushes due later: written to the timer topic \(timerTopic) (--rearm-timers); one the first run wrote that still waits is then there twice"
            )
        }
    }

    func fcmClientsReady() {
        if let proxy { stderr("replay: egress proxy \(proxy)") }
    }

    func progress(_ progress: ReplayProgress, elapsedSeconds: Double) {
        stderr(progress.line(elapsedSeconds: elapsedSeconds))
    }

    func stopping() {
        stderr("replay: stopping; waiting for the events in flight")
    }

    /// `{"body":{…},"source":"events/0/12"}` per message (with `"variant":"shipped"` for an event
    /// type with variants, `"rules_stage":"<topic>"` for one handed to the workers' rules stage), or `{"error":{"code":…,"reason":…},"source":…}`.
    func rendered(_ message: KafkaMessage, _ result: Result<MappingSet.Rendered, MappingFailure>) {
        guard printRendered else { return }
        var members: [(key: String, value: JSONValue)] = [("source", .string("\(message.topic)/\(message.partition)/\(message.offset)"))]
        switch result {
        case .success(let r):
            if let variant = r.variant { members.append(("variant", .string(variant.label))) }
            if case .rulesStage(let topic, let types) = routing, types.contains(r.event.type) {
                members.append(("rules_stage", .string(topic)))
            }
            if let deferral = r.deferral, let timerTopic {
                let deferred: [(key: String, value: JSONValue)] = [
                    ("due", .string(RFC3339.format(milliseconds: deferral.due))), ("reason", .string(deferral.reason.rawValue)),
                    ("timer_topic", .string(timerTopic)),
                ]
                members.append(("deferred", .object(deferred)))
                print(JSONWriter.string(.object(members)))
            } else if let deferral = r.deferral {
                // Without --rearm-timers: skipped, as the sending replay skips it.
                let skipped: [(key: String, value: JSONValue)] = [
                    ("code", .string(EventProcessor.notArmedCode)), ("reason", .string(deferral.notArmedReason)),
                ]
                members.append(("skipped", .object(skipped)))
                print(JSONWriter.string(.object(members)))
            }
            for m in r.messages {
                let body = (try? JSONParser.parse(m.encoded)) ?? .null
                print(JSONWriter.string(.object(members + [("body", body)])))
            }
        case .failure(let f):
            members.append(("error", .object([("code", .string(f.code)), ("reason", .string(f.reason))])))
            print(JSONWriter.string(.object(members)))
        }
    }

    /// The summary; unless the replay is complete, the command that resumes it, and the exit
    /// status: 1 after a failure, 130 when stopped.
    func finish(_ outcome: ReplayJob.Outcome) throws {
        let (summary, elapsed) = (outcome.summary, outcome.elapsed)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let p = summary.progress
        let verb = summary.isComplete ? "done" : "stopped"
        print(
            "replay \(verb): \(ReplayProgress.grouped(p.done)) events in \(String(format: "%.1f", seconds)) s\(sending == .dryRun ? " (dry run: nothing sent or written)" : "")"
        )
        print(p.counts)
        if p.handedToRules > 0, let topic = routing.topic {
            let what = sending == .dryRun ? "would be written" : "were written"
            print(
                "\(ReplayProgress.grouped(p.handedToRules)) events of mappings with cap or dedup \(what) to \(topic): the workers send them, withholding pushes FCM already acknowledged and what the caps refuse (pushbridge_pushes_withheld_total)"
            )
        }
        if p.deferred > 0, let timerTopic {
            let what = sending == .dryRun ? "would be written" : "were written"
            print("\(ReplayProgress.grouped(p.deferred)) pushes due later \(what) to \(timerTopic): the workers' timer engines send them when due")
        }
        if summary.isComplete { return }
        if let failure = summary.failure { print("failure: \(failure)") }
        print("resume with:")
        print("  " + Self.resumeCommand(summary.resume, plan: outcome.plan))
        throw ExitCode(summary.failure != nil ? 1 : outcome.interrupted ? 130 : 1)
    }

    /// The same command line with the start and end replaced by the unfinished partitions'
    /// positions and their original ends.
    static func resumeCommand(_ resume: [TopicPartition: Int64], plan: ReplayPlan) -> String {
        var args: [String] = []
        var skipNext = false
        let positional = ["--from-offset", "--from-time", "--to-offset", "--to-time", "--partition"]
        for arg in CommandLine.arguments.dropFirst() {
            if skipNext {
                skipNext = false
                continue
            }
            if positional.contains(arg) {
                skipNext = true
                continue
            }
            if arg == "--from-beginning" || positional.contains(where: { arg.hasPrefix($0 + "=") }) { continue }
            args.append(arg)
        }
        let unfinished = plan.ranges.filter { resume[$0.partition] != nil }
        for range in unfinished { args += ["--from-offset", "\(range.partition.partition):\(resume[range.partition]!)"] }
        for range in unfinished { args += ["--to-offset", "\(range.partition.partition):\(range.end)"] }
        return (["pushbridge"] + args.map(Self.shellQuoted)).joined(separator: " ")
    }

    private static func shellQuoted(_ s: String) -> String {
        let safe = s.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=,@+".contains($0) }
        return safe && !s.isEmpty ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
