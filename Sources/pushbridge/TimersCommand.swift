import ArgumentParser
import Dates
import Foundation
import JSON
import Jobs
import Kafka
import Logging
import Operations
import Pipeline

struct TimersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timers",
        abstract: "List or cancel a user's pushes waiting in the timer topic (send_at, quiet hours' defer).",
        discussion: """
            Examples:
              pushbridge timers list   --config pushbridge.yaml --user 42
              pushbridge timers cancel --config pushbridge.yaml --user 42 --reason "account deleted"
              pushbridge timers cancel --config pushbridge.yaml --user 42 --id 9f3a…   (one push, by the ID list shows)

            --user is the key the worker gave the push's timer: the target user, else the user \
            whose rules apply (the mapping's user:), else the event's ID. docs/timers.md explains \
            the timer and cancel topics.
            """,
        subcommands: [List.self, Cancel.self]
    )

    struct Target: ParsableArguments {
        @Option(name: .long, help: "The workers' config file: brokers, Kafka properties, kafka.group and timers.*.")
        var config: String

        @Option(name: .long, help: "Whose pushes: the target user's ID (or the rules' user:, or the event's ID).")
        var user: String

        /// The config, with log lines (librdkafka's among them) on standard error.
        func load() throws -> PushbridgeConfig {
            let settings = try OffsetArguments.loadConfig(config)
            LoggingSetup.bootstrap(level: .warning, format: settings.log.format)
            return settings
        }

        /// The user's pending pushes, with the cancellations the cancel topic holds applied.
        func pending(_ settings: PushbridgeConfig) async throws -> [PendingTimer] {
            let group = settings.kafka.group
            let consumer = KafkaConsumerConfiguration.standalone(brokers: settings.kafka.brokers, properties: settings.kafka.properties)
            let cancels = TimerCancels(
                topic: settings.timers.cancelTopic(group: group), consumer: consumer, logger: Logger(label: "pushbridge.timers"))
            let set = try await cancels.readAll()
            return try await PendingTimers.list(
                subject: Array(user.utf8), topic: settings.timers.topic(group: group), layout: Delivery.timerLayout(settings),
                consumer: .standalone(brokers: settings.kafka.brokers, properties: settings.kafka.properties, group: "\(group).timers"),
                cancels: set, now: RFC3339.nowMilliseconds())
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The user's pushes waiting in the timer topic, soonest first.",
            discussion: """
                Reads the user's bucket of the timer topic (timers.levels partitions) from the timer \
                group's committed offsets: what the workers fired or forwarded in the last second may \
                still show. Each line: the timer's ID (for cancel --id), its due time, why it waits, \
                the level it waits at, the source event's topic/partition/offset, and "cancelled" \
                when a cancellation covers it (it will not be sent).
                """)

        @OptionGroup var target: Target

        @Flag(name: .long, help: "One JSON object per line instead of a table.")
        var json = false

        func run() async throws {
            let settings = try target.load()
            let timers: [PendingTimer]
            do {
                timers = try await target.pending(settings)
            } catch {
                stderr("pushbridge: cannot read the timer topic: \(error)")
                throw ExitCode(1)
            }
            let layout = Delivery.timerLayout(settings)
            for t in timers {
                json ? print(JSONWriter.string(Self.object(t, layout: layout))) : print(Self.line(t, layout: layout))
            }
            if !json { print("\(timers.count) pending for \(target.user)") }
        }

        static func line(_ t: PendingTimer, layout: TimerLayout) -> String {
            let s = t.timer.source
            var line = "\(t.timer.id)  due \(RFC3339.format(milliseconds: t.timer.due))  \(t.timer.reason.rawValue)"
            line += "  level \(layout.level(ofPartition: t.partition) ?? 0)  from \(s.topic)/\(s.partition)/\(s.offset)"
            if let push = t.timer.push { line += "  push \(push)" }
            if t.copies > 1 { line += "  (\(t.copies) copies)" }
            if let cancel = t.cancelled { line += "  cancelled" + (cancel.reason.isEmpty ? "" : ": \(cancel.reason)") }
            return line
        }

        static func object(_ t: PendingTimer, layout: TimerLayout) -> JSONValue {
            let s = t.timer.source
            var members: [(key: String, value: JSONValue)] = [
                ("id", .string(t.timer.id.hex)), ("due", .string(RFC3339.format(milliseconds: t.timer.due))),
                ("reason", .string(t.timer.reason.rawValue)), ("level", .int(Int64(layout.level(ofPartition: t.partition) ?? 0))),
                ("source", .string("\(s.topic)/\(s.partition)/\(s.offset)")), ("copies", .int(Int64(t.copies))),
                ("cancelled", .bool(t.cancelled != nil)),
            ]
            if let push = t.timer.push { members.append(("push", .string(push))) }
            return .object(members)
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cancel the user's waiting pushes (all of them, or one by --id).",
            discussion: """
                Writes one record to the cancel topic (timers.cancels_topic); every worker's timer \
                engine reads it within about a second and sends none of the pushes it covers: they \
                end as skipped with the code timer_cancelled (an outcome record each). Without --id \
                it covers the pushes scheduled before now; a push scheduled later is not cancelled. \
                A push released in the second before a worker read the cancellation may still go out.
                """)

        @OptionGroup var target: Target

        @Option(name: .long, help: ArgumentHelp("One push: its timer ID, as list prints it.", valueName: "id"))
        var id: String?

        @Option(name: .long, help: "Why, for the outcome records.")
        var reason: String = ""

        func run() async throws {
            let settings = try target.load()
            var scope = TimerCancel.Scope.subject(Array(target.user.utf8))
            if let id {
                guard let timerID = TimerID(hex: id) else { throw OffsetArguments.usage("--id must be 32 hex digits, as timers list prints it") }
                scope = .id(timerID)
            }
            let topic = settings.timers.cancelTopic(group: settings.kafka.group)
            let cancel = TimerCancel(scope: scope, before: RFC3339.nowMilliseconds(), reason: reason)
            do {
                let pending = try await target.pending(settings).filter { cancel.matches($0.timer) && $0.cancelled == nil }
                try await write(cancel, topic: topic, settings: settings)
                print("cancelled \(pending.count) pending push\(pending.count == 1 ? "" : "es") of \(target.user) (\(topic))")
            } catch let error as KafkaError where error.code == .unknownTopicOrPartition {
                stderr(
                    "pushbridge: the cancel topic \(topic) does not exist: create it (any partition count, cleanup.policy=delete, retention ≥ 35 days), then restart the workers"
                )
                throw ExitCode(1)
            } catch {
                stderr("pushbridge: \(error)")
                throw ExitCode(1)
            }
        }

        private func write(_ cancel: TimerCancel, topic: String, settings: PushbridgeConfig) async throws {
            let consumer = try KafkaConsumer(configuration: .standalone(brokers: settings.kafka.brokers, properties: settings.kafka.properties))
            do {
                _ = try await consumer.partitions(of: topic)
            } catch {
                await consumer.close()
                throw error
            }
            await consumer.close()
            let producer = try KafkaProducer(
                configuration: OutputRecords.producerConfiguration(brokers: settings.kafka.brokers, properties: settings.kafka.properties))
            do {
                _ = try await producer.send(cancel.record(topic: topic))
            } catch {
                await producer.close()
                throw error
            }
            await producer.close()
        }
    }
}
