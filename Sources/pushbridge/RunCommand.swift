import ArgumentParser
import FCM
import Foundation
import Jobs
import Kafka
import Logging
import Mapping
import Operations
import Pipeline
import ServiceLifecycle

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Consume events, send localized pushes, commit after FCM acknowledged them.",
        discussion: """
            The main job: joins the consumer group, renders each event with the mappings, sends \
            the messages to FCM multiplexed over HTTP/2 (as many sends in flight and connections as FCM's answer \
            times call for), and commits a partition's offset only \
            when every event before it is done (acknowledged, dead-lettered, or skipped). \
            SIGTERM or SIGINT: stop taking events, let those in flight finish (up to \
            delivery.shutdown_timeout_ms), commit, leave the group.

            Every setting is in the config file (docs/configuration.md; a commented example is \
            examples/config/pushbridge.yaml), and each can be overridden by an environment \
            variable: PUSHBRIDGE_ + its path upper-cased, e.g. PUSHBRIDGE_KAFKA_BROKERS=b1:9092,b2:9092.

            Operating it: GET /metrics (Prometheus), /healthz, /readyz on http.listen \
            (default 0.0.0.0:9464); JSON log lines on standard error, device tokens shown by \
            their last 6 characters. Exit status: 0 after a clean stop, 1 when FCM or Kafka \
            refused the setup (nothing after the failing event is committed), 2 for a bad config.

            Examples:
              pushbridge run --config /etc/pushbridge/pushbridge.yaml
              pushbridge run --config pushbridge.yaml --validate-only   # FCM dry run
            """
    )

    @Option(name: .long, help: "The config file (YAML or JSON).")
    var config: String

    @Flag(name: .long, help: "Send with FCM's validate_only: everything is checked, nothing is delivered.")
    var validateOnly = false

    @Flag(name: .long, help: "Print the effective config (file, environment and defaults) and exit.")
    var printConfig = false

    func run() async throws {
        let settings: PushbridgeConfig
        do {
            settings = try PushbridgeConfig.load(file: config)
        } catch {
            FileHandle.standardError.write(Data("pushbridge: bad config\n\(error)\n".utf8))
            throw ExitCode(2)
        }
        if printConfig {
            print(settings.printed, terminator: "")
            return
        }
        LoggingSetup.bootstrap(level: settings.log.level, format: settings.log.format)
        let logger = Logger(label: "pushbridge")
        let metrics = MetricsSetup()
        metrics.bootstrap()

        let worker: Worker
        do {
            let mappings = try MappingFiles.load(settings.mappings, printingWarnings: false)
            worker = try Worker(settings: settings, mappings: mappings, validateOnly: validateOnly, build: .current, logger: logger)
        } catch {
            logger.critical("cannot start: \(error)")
            FileHandle.standardError.write(Data("pushbridge: cannot start: \(error)\n".utf8))
            throw ExitCode(2)
        }

        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: worker, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)
        ]
        if let listen = settings.http.listen {
            let server = OpsHTTPServer(
                host: listen.host, port: listen.port,
                metrics: {
                    worker.refreshGauges()
                    return metrics.exposition()
                }, readiness: { worker.readiness() })
            do {
                try await server.start()
            } catch {
                logger.critical("cannot listen on \(listen.host):\(listen.port): \(error)")
                throw ExitCode(2)
            }
            logger.info("serving /metrics /healthz /readyz", metadata: ["listen": "\(listen.host):\(server.boundPort ?? listen.port)"])
            services.append(.init(service: server))
        }
        var groupConfiguration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // Past the drain, allow time to commit and leave the group.
        groupConfiguration.maximumGracefulShutdownDuration = settings.delivery.shutdownTimeout + .seconds(15)
        do {
            try await ServiceGroup(configuration: groupConfiguration).run()
        } catch {
            logger.critical("stopped: \(error)")
            throw ExitCode(1)
        }
        if let failure = worker.failure {
            FileHandle.standardError.write(Data("pushbridge: stopped: \(failure)\n".utf8))
            throw ExitCode(1)
        }
    }
}
