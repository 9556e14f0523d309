import ArgumentParser
import Foundation
import Jobs
import Logging
import Mapping
import Operations
import Pipeline
import ServiceLifecycle

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

            Events of mappings with cap or dedup (docs/rules.md) are not sent by the replay itself: \
            it has no share of the workers' rules state. On a topic not keyed by user (rules.source.keyed_by: \
            none) it writes them to the by-subject topic (rules.by_subject_topic) as the workers do, and \
            the workers' rules stage decides: a push FCM already acknowledged within the window is \
            withheld as a duplicate, the rest are sent and counted in the caps (the summary counts them \
            "handed to the rules stage"; the workers must be running). With keyed_by: user the replay \
            refuses them. --ignore-caps-and-dedup sends them directly instead, as any other event: \
            devices get pushes they already had, caps are exceeded, and the workers' caps do not count \
            these sends. --validate-only sends them directly (FCM delivers nothing).

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

    @Flag(
        name: .long,
        help: """
            Send events of mappings with cap or dedup directly, as any other, instead of handing them to the workers' \
            rules stage: pushes FCM already acknowledged are sent again, caps are exceeded, and these sends do not count \
            toward the workers' caps.
            """)
    var ignoreCapsAndDedup = false

    @Flag(
        name: .long,
        help: """
            Write pushes whose send_at (or the end of the user's quiet hours with outside: defer) is still ahead to the \
            timer topic, as a worker does, for the workers' timer engines to send when due. Without it they are skipped \
            (timer_not_armed). A timer the first run wrote and still waits is then there twice: both are sent.
            """)
    var rearmTimers = false

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
        if validateOnly && rearmTimers {
            throw ValidationError("--rearm-timers writes timers the workers send for real; --validate-only delivers nothing: choose one")
        }
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
        var request = ReplayJob.Request(topic: topic, from: from, to: to)
        request.partitions = partition.isEmpty ? nil : partition
        request.eventTypes = Set(eventType)
        request.sending = dryRun ? .dryRun : validateOnly ? .validateOnly : .send
        request.maxSendsPerSecond = rate
        request.commitGroup = commit ? group : nil
        request.maxAge = ignoreMaxAge ? .ignore : .enforce
        request.maxEventsInFlight = maxInFlight
        request.capsAndDedup = ignoreCapsAndDedup ? .ignore : .rulesStage
        request.rearmTimers = rearmTimers
        let routing: ReplayJob.StatefulRouting
        do {
            routing = try ReplayJob.statefulRouting(settings: settings, mappings: mappingSet, request: request)
        } catch {
            throw OffsetArguments.usage(error.description)
        }

        LoggingSetup.bootstrap(level: settings.log.level, format: settings.log.format)
        let logger = Logger(label: "pushbridge.replay")
        let output = ReplayOutput(
            topic: topic, sending: request.sending, ignoreMaxAge: ignoreMaxAge, printRendered: print, routing: routing,
            proxy: settings.fcm.proxyURL != nil ? settings.fcm.proxySummary : nil,
            timerTopic: rearmTimers && !mappingSet.deferring.isEmpty ? settings.timers.topic(group: settings.kafka.group) : nil)
        let job = ReplayJob(settings: settings, mappings: mappingSet, request: request, reporter: output, logger: logger)
        var groupConfiguration = ServiceGroupConfiguration(
            services: [
                .init(service: job, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)
            ],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // Past the drain, allow time to commit and close.
        groupConfiguration.maximumGracefulShutdownDuration = settings.delivery.shutdownTimeout + .seconds(15)
        do {
            try await ServiceGroup(configuration: groupConfiguration).run()
        } catch let failure as ReplayJob.Failure {
            stderr("pushbridge: \(failure)")
            throw ExitCode(failure.kind == .badInput ? 2 : 1)
        }
        if let outcome = job.outcome { try output.finish(outcome) }
    }
}

func stderr(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
