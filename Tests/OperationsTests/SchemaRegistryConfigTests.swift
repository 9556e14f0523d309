import Foundation
import Mapping
import Operations
import Testing

/// `kafka.value_formats` and `schema_registry.*`: read, checked where they are written, and the
/// password never printed.
@Suite("Config: Schema Registry topics (kafka.value_formats, schema_registry)")
struct SchemaRegistryConfigTests {
    static let base = "kafka:\n  brokers: [k1:9092]\n  topics: [orders, users]\n"

    @Test("value formats per topic, the registry with its credentials; the password from the environment and redacted")
    func reads() throws {
        let text =
            Self.base + "  value_formats: {orders: avro, users: json}\nmappings: [m]\n"
            + "schema_registry:\n  url: https://sr.example:8081\n  username: key\n  ca_file: ca.pem\n  request_timeout_ms: 2500\n"
        let path = try ConfigTests.file(text)
        let config = try PushbridgeConfig.load(file: path, environment: ["PUSHBRIDGE_SCHEMA_REGISTRY_PASSWORD": "s3cret"])
        #expect(config.kafka.valueFormats == ["orders": .avro, "users": .json])
        #expect(config.schemaRegistry.url == "https://sr.example:8081" && config.schemaRegistry.username == "key")
        #expect(config.schemaRegistry.password == "s3cret" && config.schemaRegistry.requestTimeout == .milliseconds(2500))
        #expect(config.schemaRegistry.caFile == URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("ca.pem").path)
        let printed = config.printed
        #expect(printed.contains("password: \"<redacted>\"") && !printed.contains("s3cret"))
        #expect(printed.contains("  value_formats:\n    orders: avro\n    users: json\n"))
        // What --print-config prints loads back to the same formats.
        let again = try PushbridgeConfig.load(
            file: try ConfigTests.file(printed.replacingOccurrences(of: "\"<redacted>\"", with: "x")), environment: [:])
        #expect(again.kafka.valueFormats == config.kafka.valueFormats)
    }

    @Test("defaults: no registry, every topic auto")
    func defaults() throws {
        let config = try PushbridgeConfig.load(file: try ConfigTests.file(ConfigTests.minimal), environment: [:])
        #expect(config.kafka.valueFormats.isEmpty && config.schemaRegistry.url == nil && config.schemaRegistry.requestTimeout == .seconds(10))
    }

    @Test("a format that is not one is refused at its line; so is avro without a registry")
    func refusals() throws {
        let bad = Self.base + "  value_formats:\n    orders: avro\n    users: xml\nmappings: [m]\n"
        let error = try #require(throws: ConfigError.self) { try PushbridgeConfig.load(file: try ConfigTests.file(bad), environment: [:]) }
        let text = "\(error)"
        #expect(text.contains(":6:") && text.contains("kafka.value_formats.users must be one of auto, json, avro, protobuf"), "\(text)")
        #expect(text.contains("kafka.value_formats reads orders as Schema Registry records, and schema_registry.url is not set"), "\(text)")
        let env = try #require(throws: ConfigError.self) {
            try PushbridgeConfig.load(file: try ConfigTests.file(ConfigTests.minimal), environment: ["PUSHBRIDGE_KAFKA_VALUE_FORMATS": "x"])
        }
        #expect("\(env)".contains("kafka.value_formats cannot be set from the environment"))
    }

    @Test("a topic named like a secret is printed as it is and loads back; a password in the URL is not printed")
    func printing() throws {
        let text =
            Self.base + "  value_formats: {user.password-reset: avro}\nmappings: [m]\n"
            + "schema_registry:\n  url: https://key:s3cret@sr.example:8081\n"
        let config = try PushbridgeConfig.load(file: try ConfigTests.file(text), environment: [:])
        #expect(config.schemaRegistry.url == "https://key:s3cret@sr.example:8081")
        let printed = config.printed
        #expect(printed.contains("    \"user.password-reset\": avro\n") || printed.contains("    user.password-reset: avro\n"), "\(printed)")
        #expect(!printed.contains("s3cret") && printed.contains("key:<redacted>@sr.example:8081"))
        #expect(config.schemaRegistry.summary == "https://key:<redacted>@sr.example:8081")
        let again = try PushbridgeConfig.load(file: try ConfigTests.file(printed), environment: [:])
        #expect(again.kafka.valueFormats == ["user.password-reset": .avro])
    }
}
