import ArgumentParser
import DeviceRegistry
import FCM
import Foundation
import JSON
import Jobs
import Kafka
import Logging
import Mapping
import Operations
import Pipeline
import SchemaRegistry
import Synchronization
import UnixSignals

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Send a range of a topic again: after a mapping fix, an FCM outage, or to backfill an event type.",
        discussion: """
            Reads the chosen partitions in assign mode, without joining any consumer group: running \
            workers are not disturbed and the production group's offsets never move. Events go through \
            the same machinery as `run` (retries, dead-letter and token-invalidation records).

            Start (exactly one): --from-offset, --from-time, --from-beginning. End (optional, \
            exclusive): --to-offset or --to-time; without one, the replay stops at the high watermark \
            seen when it starts. A start before the partition's first stored record starts there \
            (retention deleted the rest); the plan printed first says so.

            Offsets are one number for every partition, or PARTITION:OFFSET per partition (repeat the \
            flag). Times are RFC 3339 with a zone and resolve, per partition, to the first record at \
            or after them.

            Mappings with a max_age apply it as `run` does: an event older than that is not sent, but \
            skipped or dead-lettered as its mapping's too_old says, and counted as "too old". After an \
            outage, that is usually what you want: a late "your driver is here" is worse than none. \
            --ignore-max-age sends them all anyway (with `ttl: remaining`, each gets the whole max_age, \
            counted from when it is sent).

            A progress line goes to standard error every few seconds; the summary (sent, skipped, \
            filtered, dead-lettered, too old, invalidated) to standard output. Ctrl-C (or SIGTERM) stops \
            reading, lets events in flight finish, and prints the command that resumes where it \
            stopped. Exit status: 0 done, 1 FCM or Kafka refused the setup, 2 bad input, 130 stopped.

            Examples:
              # resend everything since the outage started (docs/replay.md)
              pushbridge replay --config pushbridge.yaml --topic events \\
                  --from-time 2026-11-20T10:00:00Z --to-time 2026-11-20T11:30:00Z
              # backfill a new event type with its new mapping, at most 2,000 sends/s
              pushbridge replay --config pushbridge.yaml --topic events --from-beginning \\
                  --event-type order.shipped --mappings mappings/ --rate 2000
              # see what would be sent, without sending
              pushbridge replay --config pushbridge.yaml --topic events --from-offset 0:1200 \\
                  --to-offset 0:1300 --dry-run --print
            """
    )

    @Option(name: .long, help: "The config file: brokers, FCM, dead-letter topics, mappings.")
    var config: String

    @Option(name: .long, help: "The topic to replay.")
    var topic: String

    @Option(name: .long, help: "Only this partition (repeatable). Default: all, or those named by --from-offset P:N.")
    var partition: [Int32] = []

    @Option(name: .long, help: ArgumentHelp("Start at this offset: N for every partition, or P:N per partition (repeatable).", valueName: "offset"))
    var fromOffset: [String] = []

    @Option(name: .long, help: ArgumentHelp("Start at the first record at or after this RFC 3339 time.", valueName: "time"))
    var fromTime: String?

    @Flag(name: .long, help: "Start at the first record still stored.")
    var fromBeginning = false

    @Option(name: .long, help: ArgumentHelp("Stop before this offset: N, or P:N per partition (repeatable).", valueName: "offset"))
    var toOffset: [String] = []

    @Option(name: .long, help: ArgumentHelp("Stop before the first record at or after this RFC 3339 time.", valueName: "time"))
    var toTime: String?

    @Option(name: .long, help: ArgumentHelp("Only events of this type (repeatable). Others are counted as filtered.", valueName: "type"))
    var eventType: [String] = []

    @Option(name: .long, help: ArgumentHelp("Mapping files or directories to use instead of the config's (repeatable).", valueName: "path"))
    var mappings: [String] = []

    @Flag(
        name: .long,
        help: "Send events older than their mapping's max_age too, instead of skipping or dead-lettering them as its too_old says.")
    var ignoreMaxAge = false

    @Flag(name: .long, help: "Render only: count (and with --print, print) the messages; send and write nothing.")
    var dryRun = false

    @Flag(name: .long, help: "With --dry-run: print each rendered message, or why it cannot be rendered, as a JSON line.")
    var print = false

    @Flag(name: .long, help: "Send with FCM's validate_only: FCM checks everything and delivers nothing.")
    var validateOnly = false

    @Option(name: .long, help: ArgumentHelp("At most this many FCM sends per second (for each project of fcm.projects).", valueName: "per-second"))
    var rate: Double?

    @Option(name: .long, help: "A group of the replay's own to commit its progress to (with --commit).")
    var group: String?

    @Flag(name: .long, help: "Commit progress to --group, so a later run of that group resumes there.")
    var commit = false

    @Option(name: .long, help: "Events in flight at most.")
    var maxInFlight = 1_000

    func validate() throws {
        if print && !dryRun { throw ValidationError("--print needs --dry-run") }
        if dryRun && validateOnly { throw ValidationError("--dry-run sends nothing; --validate-only sends to FCM: choose one") }
        if commit != (group != nil) { throw ValidationError("--commit and --group go together: name the replay's own group and ask for commits") }
        if let rate, rate <= 0 { throw ValidationError("--rate must be more than 0") }
        if maxInFlight < 1 { throw ValidationError("--max-in-flight must be at least 1") }
        if !toOffset.isEmpty && toTime != nil { throw ValidationError("give only one of --to-offset and --to-time") }
    }

    func run() async throws {
        let settings = try OffsetArguments.loadConfig(config)
        if let group, group == settings.kafka.group {
            throw OffsetArguments.usage("--group \(group) is the workers' group; replay never moves its offsets. Name a group of its own.")
        }
        let (from, to): (OffsetPosition, OffsetPosition?)
        do {
            from = try OffsetArguments.exactlyOne(
                [
                    fromOffset.isEmpty ? nil : try OffsetArguments.offsets(fromOffset, flag: "--from-offset"),
                    try fromTime.map { try OffsetArguments.time($0, flag: "--from-time") },
                    fromBeginning ? .earliest : nil,
                ], names: "--from-offset, --from-time, --from-beginning")
            to =
                toOffset.isEmpty
                ? try toTime.map { try OffsetArguments.time($0, flag: "--to-time") } : try OffsetArguments.offsets(toOffset, flag: "--to-offset")
        } catch {
            throw OffsetArguments.usage("\(error)")
        }
        let mappingSet = try MappingFiles.load(mappings.isEmpty ? settings.mappings : mappings)
        let unknownTypes = eventType.filter { !mappingSet.eventTypes.contains($0) }
        if !unknownTypes.isEmpty {
            throw OffsetArguments.usage(
                "no mapping for --event-type \(unknownTypes.joined(separator: ", ")); the mappings have \(mappingSet.eventTypes.joined(separator: ", "))"
            )
        }

        LoggingSetup.bootstrap(level: settings.log.level, format: settings.log.format)
        let logger = Logger(label: "pushbridge.replay")
        let consumerConfiguration = KafkaConsumerConfiguration.standalone(
            brokers: settings.kafka.brokers, properties: settings.kafka.properties, group: group)

        let plan: ReplayPlan
        do {
            // Closed before the replay starts: it only answers the planning questions.
            let logs = KafkaLogs(logger: logger)
            let planner = try KafkaConsumer(
                configuration: .standalone(brokers: settings.kafka.brokers, properties: settings.kafka.properties),
                errorHandler: logs.errorHandler, logHandler: logs.lineHandler)
            let resolved: Result<ReplayPlan, any Error>
            do {
                resolved = .success(
                    try await ReplayPlan.resolve(
                        topic: topic, partitions: partition.isEmpty ? nil : partition, from: from, to: to, lookup: planner))
            } catch {
                resolved = .failure(error)
            }
            await planner.close()
            plan = try resolved.get()
        } catch let invalid as ReplayPlan.Invalid {
            throw OffsetArguments.usage(invalid.description)
        } catch {
            stderr("pushbridge: cannot plan the replay: \(error)")
            throw ExitCode(1)
        }
        printPlan(plan)

        var delivery: Delivery?
        // A dry run's own registry client: Avro and Protobuf records render as a run would.
        var dryRunSchemas: SchemaRegistryClient?
        let mode: Replay.Mode
        if dryRun {
            dryRunSchemas = try Delivery.schemaRegistry(settings, logger: logger)
            if print {
                mode = .dryRun(inspect: { message, rendered in ReplayCommand.printRendered(message, rendered) })
            } else {
                mode = .dryRun(inspect: { _, _ in })
            }
        } else {
            // Users' devices come from a worker's registry store as it is now (read-only: the
            // worker keeps it current): run the replay where a worker's store is.
            var directory: RegistryDirectory?
            if settings.registry.topic != nil {
                do {
                    directory = RegistryDirectory(store: try RegistryStore(path: settings.registry.path, readOnly: true), logger: logger)
                } catch {
                    stderr("pushbridge: cannot read the device registry at \(settings.registry.path) (registry.path): \(error)")
                    throw ExitCode(2)
                }
            }
            do {
                let d = try Delivery(
                    settings: settings, mappings: mappingSet, validateOnly: validateOnly, maxSendsPerSecond: rate,
                    maxAge: maxAgeCheck, directory: directory, metrics: PipelineMetrics(), logger: logger)
                if settings.fcm.proxyURL != nil { stderr("replay: egress proxy \(settings.fcm.proxySummary)") }
                try await d.warmUp()
                delivery = d
                mode = .send(d.processor)
            } catch {
                stderr("pushbridge: FCM refuses this setup: \(error)")
                throw ExitCode(1)
            }
        }

        var configuration = Replay.Configuration(consumer: consumerConfiguration, plan: plan)
        configuration.eventTypes = Set(eventType)
        configuration.schemas = delivery?.processor.schemas ?? RecordSchemas(source: dryRunSchemas, valueFormats: settings.kafka.valueFormats)
        configuration.commit = commit
        configuration.maxAge = maxAgeCheck
        configuration.maxEventsInFlight = maxInFlight
        configuration.shutdownTimeout = settings.delivery.shutdownTimeout
        let replay = try Replay(configuration: configuration, mappings: mappingSet, mode: mode, logger: logger)

        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let interrupted = Interrupted()
        let watcher = Task {
            for await _ in signals {
                stderr("replay: stopping; waiting for the events in flight")
                interrupted.set()
                replay.stop()
                break
            }
        }
        let started = ContinuousClock.now
        let summary = try await replay.run { progress, elapsed in
            stderr(progress.line(elapsedSeconds: elapsed))
        }
        watcher.cancel()
        await delivery?.close()
        await dryRunSchemas?.shutdown()
        try finish(summary, plan: plan, elapsed: ContinuousClock.now - started, interrupted: interrupted.value)
    }

    private var maxAgeCheck: MaxAgeCheck { ignoreMaxAge ? .ignore : .enforce }

    // MARK: Output

    private func printPlan(_ plan: ReplayPlan) {
        let what = dryRun ? "dry run (nothing is sent)" : validateOnly ? "validate-only sends" : "sending"
        stderr("replay: \(topic), \(ReplayProgress.grouped(plan.total)) offsets, \(what)\(ignoreMaxAge ? ", max_age ignored" : "")")
        for range in plan.ranges {
            stderr("  partition \(range.partition.partition): \(range.start) ..< \(range.end) (\(ReplayProgress.grouped(range.count)))")
            for note in range.notes { stderr("    \(note)") }
        }
    }

    private func finish(_ summary: Replay.Summary, plan: ReplayPlan, elapsed: Duration, interrupted: Bool) throws {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let p = summary.progress
        let verb = summary.isComplete ? "done" : "stopped"
        Swift.print(
            "replay \(verb): \(ReplayProgress.grouped(p.done)) events in \(String(format: "%.1f", seconds)) s\(dryRun ? " (dry run: nothing sent or written)" : "")"
        )
        Swift.print(p.counts)
        if summary.isComplete { return }
        if let failure = summary.failure { Swift.print("failure: \(failure)") }
        Swift.print("resume with:")
        Swift.print("  " + resumeCommand(summary.resume, plan: plan))
        throw ExitCode(summary.failure != nil ? 1 : interrupted ? 130 : 1)
    }

    /// The same command line with the start and end replaced by the unfinished partitions'
    /// positions and their original ends.
    private func resumeCommand(_ resume: [TopicPartition: Int64], plan: ReplayPlan) -> String {
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

    /// `{"body":{…},"source":"events/0/12"}` per message, or `{"error":{"code":…,"reason":…},"source":…}`.
    private static func printRendered(_ message: KafkaMessage, _ rendered: Result<MappingSet.Rendered, MappingFailure>) {
        var members: [(key: String, value: JSONValue)] = [("source", .string("\(message.topic)/\(message.partition)/\(message.offset)"))]
        switch rendered {
        case .success(let r):
            for m in r.messages {
                let body = (try? JSONParser.parse(m.encoded)) ?? .null
                Swift.print(JSONWriter.string(.object(members + [("body", body)])))
            }
        case .failure(let f):
            members.append(("error", .object([("code", .string(f.code)), ("reason", .string(f.reason))])))
            Swift.print(JSONWriter.string(.object(members)))
        }
    }
}

/// Set once by the signal watcher.
private final class Interrupted: Sendable {
    private let flag = Mutex(false)
    func set() { flag.withLock { $0 = true } }
    var value: Bool { flag.withLock { $0 } }
}

func stderr(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
