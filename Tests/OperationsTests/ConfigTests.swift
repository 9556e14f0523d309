import Foundation
import Logging
import Operations
import TestSupport
import Testing

@Suite("The config file: schema checks, environment overrides, defaults")
struct ConfigTests {
    /// Writes `text` to a fresh directory as `pushbridge.yaml` and returns its path.
    static func file(_ text: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pb-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("pushbridge.yaml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func problems(_ text: String, environment: [String: String] = [:]) throws -> [String] {
        do {
            _ = try PushbridgeConfig.load(file: try file(text), environment: environment)
            return []
        } catch let error as ConfigError {
            return error.problems.map { p in
                // file paths differ per run: keep the line only
                p.location.contains(":") ? "line \(p.location.split(separator: ":").last!): \(p.message)" : p.description
            }
        }
    }

    static let minimal = "kafka:\n  brokers: [k1:9092]\n  topics: [events]\nmappings: [m]\n"

    @Test("the commented example loads with its values, paths resolved against its directory")
    func fullExample() throws {
        let c = try PushbridgeConfig.load(file: Repository.root + "/examples/config/pushbridge.yaml", environment: [:])
        #expect(c.kafka.brokers == ["kafka-1:9092", "kafka-2:9092"])
        #expect(c.kafka.instanceID == nil && c.kafka.properties["security.protocol"] == "SASL_SSL")
        #expect(c.mappings == [Repository.root + "/examples/mappings"])
        #expect(c.fcm.serviceAccountFile == "/var/run/secrets/fcm/service-account.json")
        #expect(c.fcm.retry.budget == .seconds(300) && c.delivery.unknownEventTypes == .skip)
        #expect(c.fcm.retry.maxAttempts == nil, "transient failures are retried until the budget, not a number of times")
        #expect(c.http.listen?.host == "0.0.0.0" && c.http.listen?.port == 9464)
    }

    @Test("a minimal file gets every default")
    func defaults() throws {
        let c = try PushbridgeConfig.load(file: try Self.file(Self.minimal), environment: [:])
        var expected = PushbridgeConfig()
        expected.kafka.brokers = ["k1:9092"]
        expected.kafka.topics = ["events"]
        expected.mappings = c.mappings
        #expect(c == expected)
        #expect(c.mappings.count == 1 && c.mappings[0].hasSuffix("/m"))
    }

    @Test("PUSHBRIDGE_* environment variables win over the file")
    func environment() throws {
        let env = [
            "PUSHBRIDGE_KAFKA_BROKERS": "a:1,b:2", "PUSHBRIDGE_DELIVERY_MAX_EVENTS_IN_FLIGHT": "500",
            "PUSHBRIDGE_FCM_VALIDATE_ONLY": "true", "PUSHBRIDGE_LOG_FORMAT": "text", "PUSHBRIDGE_HTTP_LISTEN": "off",
            "PUSHBRIDGE_FCM_MAX_SENDS_PER_SECOND": "2500.5", "PUSHBRIDGE_KAFKA_INSTANCE_ID": "pod-3",
            "PUSHBRIDGE_FCM_CONNECTIONS": "4",
        ]
        let c = try PushbridgeConfig.load(file: try Self.file(Self.minimal + "delivery:\n  max_events_in_flight: 20\n"), environment: env)
        #expect(c.kafka.brokers == ["a:1", "b:2"])
        #expect(c.delivery.maxEventsInFlight == 500)
        #expect(c.fcm.validateOnly && c.log.format == .text && c.http.listen == nil)
        #expect(c.fcm.maxSendsPerSecond == 2500.5 && c.kafka.instanceID == "pod-3")
        #expect(c.fcm.connections == 4)
    }

    @Test("one Kafka property per environment variable (how a Secret reaches librdkafka), over the file's")
    func environmentProperties() throws {
        let text = "kafka:\n  brokers: [k1:9092]\n  topics: [events]\n  properties: {sasl.username: pb, sasl.password: from-file}\nmappings: [m]\n"
        let c = try PushbridgeConfig.load(
            file: try Self.file(text),
            environment: [
                "PUSHBRIDGE_KAFKA_PROPERTIES_SASL_PASSWORD": "hunter2", "PUSHBRIDGE_KAFKA_PROPERTIES_SECURITY_PROTOCOL": "SASL_SSL",
            ])
        #expect(c.kafka.properties == ["sasl.username": "pb", "sasl.password": "hunter2", "security.protocol": "SASL_SSL"])
    }

    @Test("--print-config output loads back to the same values, with secret properties redacted")
    func printed() throws {
        let source = try Self.file(
            """
            kafka:
              brokers: [k1:9092]
              topics: [events, "odd topic"]
              properties: {sasl.password: p, ssl.key.pem: k, client.id: pb, sasl.username: "@ops-team", group.protocol: "-x"}
            mappings: [m]
            fcm:
              projects:
                consumer: {service_account: keys/consumer.json, project_sends_per_second: 9000}
                driver.app: {service_account: /etc/driver.json, max_sends_per_second: 250.5}
              default_project: consumer
            """)
        var env = [
            "PUSHBRIDGE_FCM_MAX_SENDS_PER_SECOND": "2500.5", "PUSHBRIDGE_KAFKA_INSTANCE_ID": "pod-3", "PUSHBRIDGE_HTTP_LISTEN": "127.0.0.1:9000",
        ]
        env["PUSHBRIDGE_DELIVERY_UNKNOWN_EVENT_TYPES"] = "dead-letter"
        env["PUSHBRIDGE_FCM_CONNECTIONS"] = "2"
        let c = try PushbridgeConfig.load(file: source, environment: env)
        let printed = c.printed
        #expect(printed.contains("sasl.password: <redacted>") && printed.contains("ssl.key.pem: <redacted>") && printed.contains("client.id: pb"))
        #expect(!printed.contains(": p\n") && !printed.contains(": k\n"))
        let again = try PushbridgeConfig.load(file: try Self.file(printed), environment: [:])
        var expected = c
        expected.kafka.properties["sasl.password"] = "<redacted>"
        expected.kafka.properties["ssl.key.pem"] = "<redacted>"
        #expect(again == expected, "\(printed)")
        #expect(c.fcm.projects.count == 2 && c.fcm.defaultProject == "consumer")
    }

    @Test("fcm.projects: each project's settings read and paths resolved; every mistake named with its line")
    func projects() throws {
        let path = try Self.file(
            Self.minimal + """
                fcm:
                  projects:
                    consumer: {service_account: keys/consumer.json, project_sends_per_second: 9000}
                    driver: {service_account: /etc/driver.json, max_sends_per_second: 250}
                """)
        let c = try PushbridgeConfig.load(file: path, environment: [:])
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
        #expect(
            c.fcm.projects == [
                "consumer": .init(serviceAccountFile: dir + "/keys/consumer.json", projectSendsPerSecond: 9000),
                "driver": .init(serviceAccountFile: "/etc/driver.json", maxSendsPerSecond: 250),
            ])
        #expect(c.fcm.defaultProject == nil && c.fcm.serviceAccountFile == nil)

        let problems = try Self.problems(
            Self.minimal + """
                fcm:
                  service_account: sa.json
                  projects:
                    "bad name": {service_account: a.json}
                    nokey: {max_sends_per_second: 5}
                    typo: {service_acount: a.json}
                    slow: {service_account: a.json, max_sends_per_second: 0}
                  default_project: rider
                """)
        #expect(problems.contains("line 8: fcm.projects: \"bad name\" is not a project name (1-100 of letters, digits, - _ .)"), "\(problems)")
        #expect(problems.contains("line 9: fcm.projects.nokey has no service_account"), "\(problems)")
        #expect(
            problems.contains(
                "line 10: unknown key fcm.projects.typo.service_acount (a project has service_account, max_sends_per_second, project_sends_per_second)"
            ),
            "\(problems)")
        #expect(problems.contains("line 11: fcm.projects.slow.max_sends_per_second must be a number"), "\(problems)")
        #expect(
            problems.contains(
                "line 6: fcm.service_account and fcm.projects cannot both be set: with several projects, each names its own service_account"),
            "\(problems)")
        #expect(problems.contains("line 12: fcm.default_project \"rider\" is not a project: fcm.projects has slow"), "\(problems)")
        let fromEnvironment = try Self.problems(Self.minimal, environment: ["PUSHBRIDGE_FCM_PROJECTS": "a=b"])
        #expect(fromEnvironment == ["PUSHBRIDGE_FCM_PROJECTS: fcm.projects cannot be set from the environment; name the projects in the config file"])
    }

    @Test("required keys may come from the environment alone")
    func requiredFromEnvironment() throws {
        let c = try PushbridgeConfig.load(
            file: try Self.file("mappings: [m]\n"),
            environment: [
                "PUSHBRIDGE_KAFKA_BROKERS": "k:9092", "PUSHBRIDGE_KAFKA_TOPICS": "t1,t2",
            ])
        #expect(c.kafka.topics == ["t1", "t2"])
    }

    @Test("every problem is reported with its line, and typos get a suggestion")
    func fileErrors() throws {
        let text = """
            kafka:
              brokers: [k1:9092]
              topic: [events]
              session_timeout_ms: soon
            mappings: [m]
            delivery:
              max_events_in_flight: 0
              unknown_event_types: drop
            fcm:
              retry: {max_atempts: 3}
            http: {listen: "nowhere"}
            """
        let problems = try Self.problems(text)
        #expect(problems.contains("line 3: unknown key kafka.topic (did you mean kafka.topics?)"))
        #expect(problems.contains("line 4: kafka.session_timeout_ms must be an integer ≥ 1"))
        #expect(problems.contains("line 7: delivery.max_events_in_flight must be an integer ≥ 1"))
        #expect(problems.contains("line 8: delivery.unknown_event_types must be one of skip, dead-letter"))
        #expect(problems.contains("line 10: unknown key fcm.retry.max_atempts (did you mean fcm.retry.max_attempts?)"))
        #expect(problems.contains { $0.contains("http.listen must be host:port") })
        #expect(problems.contains { $0.contains("kafka.topics is required (or set PUSHBRIDGE_KAFKA_TOPICS)") })
    }

    @Test("a bad environment override is named, not silently ignored")
    func environmentErrors() throws {
        let problems = try Self.problems(
            Self.minimal,
            environment: [
                "PUSHBRIDGE_DELIVERY_PARTITION_BUFFER": "lots", "PUSHBRIDGE_LOG_LEVEL": "loud",
                "PUSHBRIDGE_KAFKA_PROPERTIES": "sasl.password=x", "PUSHBRIDGE_KAFKA_PROPERTIES_SASL_USERNAME": "",
            ])
        #expect(problems.contains { $0.hasPrefix("PUSHBRIDGE_KAFKA_PROPERTIES: kafka.properties cannot be set as a whole") })
        #expect(problems.contains("PUSHBRIDGE_KAFKA_PROPERTIES_SASL_USERNAME: a Kafka property needs a name and a value"))
        #expect(problems.contains("PUSHBRIDGE_DELIVERY_PARTITION_BUFFER: delivery.partition_buffer must be an integer ≥ 1, got \"lots\""))
        #expect(problems.contains { $0.hasPrefix("PUSHBRIDGE_LOG_LEVEL: log.level must be one of trace") })
    }

    @Test("acks other than all is refused, from the file (with its line) and from the environment")
    func acksMustBeAll() throws {
        let text = Self.minimal.replacingOccurrences(of: "  topics: [events]\n", with: "  topics: [events]\n  properties:\n    acks: 1\n")
        let problems = try Self.problems(text, environment: ["PUSHBRIDGE_KAFKA_PROPERTIES_REQUEST_REQUIRED_ACKS": "0"])
        #expect(problems.count == 2)
        #expect(problems.contains { $0.hasPrefix("line 5: kafka.properties.acks must be all (or -1), got 1:") })
        #expect(
            problems.contains {
                $0.hasPrefix("PUSHBRIDGE_KAFKA_PROPERTIES_REQUEST_REQUIRED_ACKS: kafka.properties.request.required.acks must be all")
            })
        #expect(try Self.problems(text.replacingOccurrences(of: "acks: 1", with: "acks: all")).isEmpty)
        #expect(try Self.problems(Self.minimal, environment: ["PUSHBRIDGE_KAFKA_PROPERTIES_ACKS": "-1"]).isEmpty)
    }

    @Test("unreadable files and non-YAML are errors, not crashes")
    func unreadable() throws {
        #expect(throws: ConfigError.self) { try PushbridgeConfig.load(file: "/nonexistent/pushbridge.yaml", environment: [:]) }
        #expect(try Self.problems("kafka: [unclosed\n").first?.contains("not valid YAML or JSON") == true)
        #expect(try Self.problems("- a\n- b\n").first?.contains("must be a map of sections") == true)
    }

    @Test("JSON config files work too")
    func json() throws {
        let c = try PushbridgeConfig.load(
            file: try Self.file(#"{"kafka": {"brokers": ["k:1"], "topics": ["t"]}, "mappings": ["m"], "log": {"level": "debug"}}"#), environment: [:])
        #expect(c.log.level == .debug)
    }

    @Test("schemas/config.schema.json accepts the examples and rejects what the loader rejects")
    func schema() async throws {
        let script = """
            import json, sys, yaml, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            v = jsonschema.Draft202012Validator(schema)
            for path in sys.argv[2:]:
                print("valid" if not list(v.iter_errors(yaml.safe_load(open(path)))) else "invalid")
            """
        let bad = [
            Self.minimal + "delivery: {max_events_in_flight: 0}\n",
            Self.minimal + "kafka_typo: 1\n",
            Self.minimal + "log: {format: xml}\n",
            "kafka: {brokers: [k]}\nmappings: [m]\n",
            Self.minimal + "http: {listen: nowhere}\n",
            Self.minimal + "fcm: {proxy: \"http://proxy.corp\"}\n",
            Self.minimal.replacingOccurrences(of: "  topics: [events]\n", with: "  topics: [events]\n  properties: {acks: 1}\n"),
            Self.minimal + "fcm: {projects: {app: {max_sends_per_second: 5}}}\n",
            Self.minimal + "fcm: {projects: {\"a b\": {service_account: x.json}}}\n",
        ]
        for text in bad { #expect(!(try Self.problems(text)).isEmpty, "the loader accepts \(text)") }
        let files =
            [Repository.root + "/examples/config/pushbridge.yaml", Repository.root + "/examples/config/minimal.yaml"]
            + (try bad.map(Self.file))
        let r = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", script, Repository.root + "/schemas/config.schema.json"] + files)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.split(separator: "\n").map(String.init) == ["valid", "valid"] + bad.map { _ in "invalid" }, "\(r.output)")
    }
}
