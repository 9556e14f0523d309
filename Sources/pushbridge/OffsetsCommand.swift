import ArgumentParser
import Foundation
import Jobs
import Kafka
import Logging
import Operations
import Pipeline

struct OffsetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offsets",
        abstract: "Show or move a consumer group's committed offsets.",
        discussion: """
            Examples:
              pushbridge offsets show --config pushbridge.yaml
              pushbridge offsets show --brokers localhost:9092 --group pushbridge --topic events
              pushbridge offsets reset --config pushbridge.yaml --topic events --to-time 2026-11-20T10:00:00Z
            """,
        subcommands: [Show.self, Reset.self]
    )

    /// Where the cluster is and which group: from the config, or given directly.
    struct Target: ParsableArguments {
        @Option(name: .long, help: "A config file: brokers, Kafka properties, the workers' group and topics.")
        var config: String?

        @Option(name: .long, help: ArgumentHelp("Brokers, host:port[,host:port…] (instead of --config).", valueName: "list"))
        var brokers: String?

        @Option(name: .long, help: "The consumer group. Default: the config's kafka.group.")
        var group: String?

        @Option(name: .long, help: "A topic (repeatable). Default: the config's kafka.topics.")
        var topic: [String] = []

        func validate() throws {
            if (config == nil) == (brokers == nil) { throw ValidationError("give --config or --brokers") }
            if config == nil && group == nil { throw ValidationError("--brokers needs --group") }
            if config == nil && topic.isEmpty { throw ValidationError("--brokers needs --topic") }
        }

        /// The consumer's configuration, the group and the topics. Also sets up the log lines
        /// (librdkafka's among them) on standard error: as the config says, or text from warning up.
        func resolve() throws -> (consumer: KafkaConsumerConfiguration, group: String, topics: [String]) {
            if let config {
                let s = try OffsetArguments.loadConfig(config)
                LoggingSetup.bootstrap(level: s.log.level, format: s.log.format)
                let group = group ?? s.kafka.group
                return (
                    .standalone(brokers: s.kafka.brokers, properties: s.kafka.properties, group: group), group, topic.isEmpty ? s.kafka.topics : topic
                )
            }
            LoggingSetup.bootstrap(level: .warning, format: .text)
            let list = brokers!.split(separator: ",").map(String.init)
            return (.standalone(brokers: list, properties: [:], group: group!), group!, topic)
        }

        /// The group's state and members, asked with a group-less consumer: the coordinator
        /// answers it like any client.
        static func describe(_ group: String, _ configuration: KafkaConsumerConfiguration) async throws -> Result<KafkaGroupDescription, KafkaError> {
            try await withConsumer(.standalone(brokers: configuration.bootstrapServers, properties: configuration.properties)) { observer in
                do throws(KafkaError) { return .success(try await observer.describeGroup(group)) } catch { return .failure(error) }
            }
        }

        /// Runs `body` with a consumer whose errors and librdkafka lines go to the log (after
        /// ``resolve()``), closed when `body` returns or throws.
        static func withConsumer<T>(_ configuration: KafkaConsumerConfiguration, _ body: (KafkaConsumer) async throws -> T) async throws -> T {
            let logs = KafkaLogs(logger: Logger(label: "pushbridge.offsets"))
            return try await KafkaConsumer.withConsumer(
                configuration: configuration, errorHandler: logs.errorHandler, logHandler: logs.lineHandler, body)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Per partition: the group's committed offset, the high watermark, and the lag.",
            discussion: """
                The group's state and members come first when the broker can describe groups. \
                A partition where the group has committed nothing shows "-" and counts all its \
                stored records as lag.
                """)

        @OptionGroup var target: Target

        func run() async throws {
            let (configuration, group, topics) = try target.resolve()
            try await Target.withConsumer(configuration) { consumer in
                let description = try? await Target.describe(group, configuration).get()
                if let description {
                    print("group \(group): \(description.state), \(description.members.count) member\(description.members.count == 1 ? "" : "s")")
                } else {
                    print("group \(group)")
                }
                let rows: [GroupOffsetRow]
                do {
                    rows = try await GroupOffsets.show(topics: topics, consumer: consumer)
                } catch {
                    stderr("pushbridge: \(error)")
                    throw ExitCode(1)
                }
                print(OffsetsTable.render(rows))
            }
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move the group's committed offsets; refused while the group has members.",
            discussion: """
                Exactly one of --to-offset, --to-time, --to-earliest, --to-latest. The workers must be \
                stopped first: a running member would commit over the reset. Without --force the \
                reset is refused while the group has members, or when the broker cannot say. \
                --dry-run prints the change without committing it.

                Example: re-deliver everything since 10:00 with the workers themselves
                  (stop the workers)
                  pushbridge offsets reset --config pushbridge.yaml --to-time 2026-11-20T10:00:00Z
                  (start the workers)
                """)

        @OptionGroup var target: Target

        @Option(name: .long, help: "Only this partition (repeatable). Default: all.")
        var partition: [Int32] = []

        @Option(name: .long, help: ArgumentHelp("N for every partition, or P:N per partition (repeatable).", valueName: "offset"))
        var toOffset: [String] = []

        @Option(name: .long, help: ArgumentHelp("The first record at or after this RFC 3339 time.", valueName: "time"))
        var toTime: String?

        @Flag(name: .long, help: "The first record still stored.")
        var toEarliest = false

        @Flag(name: .long, help: "The high watermark: skip everything stored.")
        var toLatest = false

        @Flag(name: .long, help: "Reset even if the group has members, or the broker cannot describe it.")
        var force = false

        @Flag(name: .long, help: "Print the change; commit nothing.")
        var dryRun = false

        func run() async throws {
            let (configuration, group, topics) = try target.resolve()
            let position: OffsetPosition
            do {
                position = try OffsetArguments.exactlyOne(
                    [
                        toOffset.isEmpty ? nil : try OffsetArguments.offsets(toOffset, flag: "--to-offset"),
                        try toTime.map { try OffsetArguments.time($0, flag: "--to-time") },
                        toEarliest ? .earliest : nil,
                        toLatest ? .latest : nil,
                    ], names: "--to-offset, --to-time, --to-earliest, --to-latest")
            } catch {
                throw OffsetArguments.usage("\(error)")
            }
            guard topics.count == 1 || partition.isEmpty else {
                throw OffsetArguments.usage("--partition needs exactly one --topic")
            }
            try await Target.withConsumer(configuration) { consumer in
                if !dryRun {
                    switch try await Target.describe(group, configuration) {
                    case .success(let d) where d.isActive && !force:
                        throw OffsetArguments.usage(
                            "group \(group) has \(d.members.count) active member(s) (\(d.state)); stop the workers first, or --force")
                    case .failure(let error) where !force:
                        throw OffsetArguments.usage("cannot tell whether group \(group) has members (\(error)); stop the workers and use --force")
                    case .failure(let error):
                        stderr("pushbridge: cannot tell whether group \(group) has members (\(error)); resetting anyway (--force)")
                    default:
                        break
                    }
                }

                var changes: [OffsetChange] = []
                do {
                    for topic in topics {
                        changes += try await GroupOffsets.planReset(
                            topic: topic, partitions: partition.isEmpty ? nil : partition, to: position, consumer: consumer)
                    }
                } catch let invalid as ReplayPlan.Invalid {
                    throw OffsetArguments.usage(invalid.description)
                } catch {
                    stderr("pushbridge: \(error)")
                    throw ExitCode(1)
                }
                print(OffsetsTable.render(changes))
                for change in changes {
                    for note in change.notes { print("  partition \(change.partition.partition): \(note)") }
                }
                if dryRun {
                    print("dry run: nothing committed")
                    return
                }
                do {
                    try await GroupOffsets.apply(changes, consumer: consumer)
                } catch {
                    stderr("pushbridge: the broker refused the reset: \(error)")
                    throw ExitCode(1)
                }
                print("group \(group): offsets reset")
            }
        }
    }
}

/// Plain aligned tables for `offsets show` and `offsets reset`.
enum OffsetsTable {
    static func render(_ rows: [GroupOffsetRow]) -> String {
        table(
            ["TOPIC", "PARTITION", "COMMITTED", "HIGH", "LAG"],
            rows.map { r in
                [r.partition.topic, String(r.partition.partition), r.committed.map(String.init) ?? "-", String(r.high), String(r.lag)]
            })
    }

    static func render(_ changes: [OffsetChange]) -> String {
        table(
            ["TOPIC", "PARTITION", "FROM", "TO"],
            changes.map { c in
                [c.partition.topic, String(c.partition.partition), c.from.map(String.init) ?? "-", String(c.to)]
            })
    }

    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { i in all.map { $0[i].count }.max() ?? 0 }
        return all.map { row in
            row.indices.map { i in i == row.count - 1 ? row[i] : row[i].padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
