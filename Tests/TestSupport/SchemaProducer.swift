import Foundation
import ProcessHarness

/// Produces records with Confluent's own Python serializers (`Resources/produce_records.py`:
/// confluent-kafka 2.16.1's AvroSerializer / ProtobufSerializer and its Schema Registry client,
/// installed by scripts/setup.sh into `.tools/python`), so that tests read the exact frames
/// Confluent's clients write. Fixture schemas and records: ``fixture(_:)``.
public enum SchemaProducer {
    public enum Format: String, Sendable {
        case avro, protobuf
    }

    /// How the serializer finds the schema's ID (its `auto.register.schemas` and
    /// `use.latest.version`).
    public enum Mode: Sendable {
        /// Registers the schema (POST /subjects/{subject}/versions), the serializers' default.
        case autoRegister
        /// Looks it up (POST /subjects/{subject}); fails if it is not registered.
        case lookUp
        /// Writes with the subject's latest version (GET /subjects/{subject}/versions/latest).
        case latestVersion
    }

    /// What a run produced: the count, the IDs in the records' frames, the value subject, and
    /// the Avro references it registered first.
    public struct Produced: Sendable, Decodable {
        public struct Reference: Sendable, Decodable {
            public var name: String
            public var subject: String
            public var version: Int
            public var id: Int
        }

        public var produced: Int
        public var schemaIDs: [Int]
        public var subject: String
        public var references: [Reference]
        /// ``serialize(format:schema:message:records:registry:protoPaths:topic:)``'s values, in base64.
        var encodedValues: [String]?

        /// The serialized values (frames included), when nothing was produced.
        public var values: [[UInt8]] { (encodedValues ?? []).compactMap { Data(base64Encoded: $0).map { Array($0) } } }

        enum CodingKeys: String, CodingKey {
            case produced, subject, references
            case schemaIDs = "schema_ids"
            case encodedValues = "values"
        }
    }

    /// produce_records.py failed (a registry refusal, a TLS error, a delivery error): its output.
    public struct Failure: Error, CustomStringConvertible {
        public let status: Int32
        public let output: String
        public var description: String { "produce_records.py exited \(status): \(output)" }
    }

    /// A file under `Tests/TestSupport/Resources/schemas/` (e.g. `avro/acme.orders.OrderShipped.avsc`).
    public static func fixture(_ relative: String) -> String {
        Repository.root + "/Tests/TestSupport/Resources/schemas/" + relative
    }

    /// Produces every record of `records` (JSON lines) to `topic` and returns the schema IDs the
    /// serializer put in their frames.
    /// - Parameters:
    ///   - schema: an `.avsc` or `.proto` file; `message`: the Protobuf message's full name.
    ///   - references: Avro `.avsc` files the schema refers to, registered first.
    ///   - protoPaths: import roots for Protobuf (the file's name is its path under one).
    ///   - auth, trust: how the client reaches `registry` (by default as the server asks).
    /// - Throws: ``Failure`` with the script's output when it exits non-zero.
    public static func produce(
        format: Format, schema: String, message: String? = nil, records: String, topic: String, brokers: String,
        registry: SchemaRegistryServer, references: [String] = [], protoPaths: [String] = [],
        auth: SchemaRegistryServer.Auth = .server, trust: SchemaRegistryServer.Trust = .serverCA, mode: Mode = .autoRegister,
        registryRetries: Int = 3, producerProperties: [String: String] = [:]
    ) async throws -> [Int] {
        try await run(
            format: format, schema: schema, message: message, records: records, topic: topic, brokers: brokers,
            registry: registry, references: references, protoPaths: protoPaths, auth: auth, trust: trust, mode: mode,
            registryRetries: registryRetries, producerProperties: producerProperties
        ).schemaIDs
    }

    /// ``produce(format:schema:message:records:topic:brokers:registry:references:protoPaths:auth:trust:mode:registryRetries:producerProperties:)``
    /// with everything the script reported.
    public static func run(
        format: Format, schema: String, message: String? = nil, records: String, topic: String, brokers: String,
        registry: SchemaRegistryServer, references: [String] = [], protoPaths: [String] = [],
        auth: SchemaRegistryServer.Auth = .server, trust: SchemaRegistryServer.Trust = .serverCA, mode: Mode = .autoRegister,
        registryRetries: Int = 3, producerProperties: [String: String] = [:]
    ) async throws -> Produced {
        var arguments = [
            "--format", format.rawValue, "--schema", schema, "--records", records, "--topic", topic,
            "--bootstrap-servers", brokers, "--registry", registry.url, "--registry-retries", String(registryRetries),
        ]
        if let message { arguments += ["--message", message] }
        arguments += references.flatMap { ["--reference", $0] } + protoPaths.flatMap { ["--proto-path", $0] }
        arguments += producerProperties.sorted { $0.key < $1.key }.flatMap { ["--producer-property", "\($0.key)=\($0.value)"] }
        switch mode {
        case .autoRegister: break
        case .lookUp: arguments.append("--no-auto-register")
        case .latestVersion: arguments.append("--use-latest-version")
        }
        if case .serverCA = trust, let caFile = registry.caFile { arguments += ["--registry-ca", caFile] }
        let credentials: SchemaRegistryServer.Credentials? =
            switch auth {
            case .server: registry.credentials
            case .none: nil
            case .basic(let given): given
            }
        if let credentials { arguments += ["--registry-user", credentials.user, "--registry-password", credentials.password] }
        return try await script(arguments)
    }

    /// Serializes every record of `records` as ``produce(format:schema:message:records:topic:brokers:registry:references:protoPaths:auth:trust:mode:registryRetries:producerProperties:)``
    /// does (registering the schema), and writes nothing to Kafka: ``Produced/values`` has them.
    public static func serialize(
        format: Format, schema: String, message: String? = nil, records: String, registry: SchemaRegistryServer, protoPaths: [String] = [],
        topic: String = "values"
    ) async throws -> Produced {
        var arguments = [
            "--format", format.rawValue, "--schema", schema, "--records", records, "--topic", topic, "--registry", registry.url,
            "--print-values",
        ]
        if let message { arguments += ["--message", message] }
        arguments += protoPaths.flatMap { ["--proto-path", $0] }
        if let caFile = registry.caFile { arguments += ["--registry-ca", caFile] }
        if let credentials = registry.credentials {
            arguments += ["--registry-user", credentials.user, "--registry-password", credentials.password]
        }
        return try await script(arguments)
    }

    /// Runs produce_records.py with `arguments` and reads the line it prints.
    private static func script(_ arguments: [String]) async throws -> Produced {
        let python = Repository.tool("python")
        guard FileManager.default.fileExists(atPath: python + "/confluent_kafka") else {
            throw TestSupportError("\(python) has no confluent_kafka: run scripts/setup.sh")
        }
        let command = ["PYTHONPATH=\(python)", SchemaRegistryServer.python, "-B", SchemaRegistryServer.resources + "/produce_records.py"]
        let (status, output) = try await ChildProcess.run("/usr/bin/env", command + arguments, timeout: .seconds(120))
        guard status == 0, let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{\"produced\"") }) else {
            throw Failure(status: status, output: output)
        }
        return try JSONDecoder().decode(Produced.self, from: Data(line.utf8))
    }
}
