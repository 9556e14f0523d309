// swift-tools-version: 6.1
import PackageDescription

// Layers, bottom to top (see docs/architecture.md):
//   CRdKafka, CCurl        C system libraries with typed shims (CSQLite: SQLite, for the local stores;
//   CNghttp2, COpenSSL     nghttp2 and OpenSSL: the HTTP/2 client's own engine)
//   Threading              OS threads for blocking C loops; SpawnGuard; ChangeSignal (waits on a change)
//   Kafka, HTTP2           Swift wrappers that own the C resources (C calls only in RDKafka/, Curl/, Nghttp2/, TLS/)
//   SQLite                 a SQLite connection and its statements (the only module that imports CSQLite)
//   JSON, Mapping          pure: event + mapping files -> FCM v1 messages
//   Dates                  pure: RFC 3339 timestamps, civil dates and IANA time zones (TZif from the OS tzdata;
//                          quiet windows) (events' times, Avro/Protobuf times, logs, users' local time)
//   Rules                  pure: caps and dedup state (facts, their merge, verdicts, the in-flight table)
//   RulesStore             the rules' state partitions in a local SQLite file (over SQLite)
//   Preferences            pure: what a user chose (muted categories, time zone, quiet hours); the registry stores it, the rules read it
//   FCMTargets             what an FCM message goes to (fid, token, topic, condition): Mapping renders it, FCM sends to it
//   RecordDecoding         pure: Avro, Protobuf, Confluent's wire format -> JSONValue (Mapping reads it)
//   Localization           pure: app string resources, `lint` and `preview` (no Mapping; JSON reads String Catalogs)
//   MappingLocalization    the keys the mappings send, for lint and preview
//   FCM                    FCM HTTP v1: OAuth2, error classification, retries, quotas, send gate
//   FCMEmulator            FCM on loopback: the oracle for tests and the demo
//   Operations             config, logs, metrics, the ops HTTP endpoint
//   SchemaRegistry         writer schemas by ID from a Confluent-compatible Schema Registry (over HTTP2)
//   DeviceRegistry         the device registry: a Kafka topic in a local SQLite file (its schema and SQL in SQLite/)
//   EventTracing           W3C trace context from Kafka headers and CloudEvents, an event's spans, OTLP/HTTP JSON export
//   Pipeline               consume -> map -> send -> commit after ack; replay; offsets
//   ProcessHarness         servers as child processes on free ports, for tests and the bench
//   pushbridge             the executable (CLI)
//   pushbridge-bench       benchmarks (`name: value` lines)
let package = Package(
    name: "pushbridge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushbridge", targets: ["pushbridge"]),
        .executable(name: "pushbridge-bench", targets: ["pushbridge-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64", from: "1.2.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.36.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.0"),
        .package(url: "https://github.com/swift-otel/swift-w3c-trace-context", from: "1.0.0"),
    ],
    targets: [
        // MARK: C modules
        .systemLibrary(
            name: "CRdKafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // nghttp2 and OpenSSL: the HTTP/2 client's own engine (HTTP2/Nghttp2/, HTTP2/TLS/), which
        // writes a turn's frames as one TLS record; libcurl serves the other uses.
        .systemLibrary(
            name: "CNghttp2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),

        // MARK: Wrappers
        // Dedicated OS threads for blocking C loops, shared by both wrappers.
        .target(name: "Threading"),
        .target(
            name: "Kafka",
            dependencies: ["CRdKafka", "Threading", .product(name: "DequeModule", package: "swift-collections")]
        ),
        .target(
            name: "HTTP2",
            dependencies: ["CCurl", "CNghttp2", "COpenSSL", "Threading", .product(name: "DequeModule", package: "swift-collections")]
        ),
        // One SQLite connection and its prepared statements, for the stores on local disk.
        .target(name: "SQLite", dependencies: ["CSQLite"]),

        // MARK: Pure mapping core
        // A strict JSON parser/writer with exact numbers, shared by mapping, FCM and the emulator.
        .target(name: "JSON"),
        .target(name: "Dates"),
        // What a user chose (muted categories, time zone, quiet hours): the registry stores it, the rules read it.
        .target(name: "Preferences", dependencies: ["Dates"]),
        // Caps and "no repeated pushes": the changelog's facts and their binary codec, their merge
        // (a lattice), cap and dedup verdicts, the in-flight table (docs/rules-state.md; not wired yet).
        .target(name: "Rules", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        // The state partitions of the rules in one SQLite file per worker: facts applied in changelog
        // order with their offsets, the overlay of facts not read back, claims, expiry (docs/rules-state.md).
        .target(name: "RulesStore", dependencies: ["SQLite", "Rules"]),
        // What an FCM message goes to: Mapping renders it, FCM backs off a throttled one (neither depends on the other).
        .target(name: "FCMTargets"),
        // Avro, Protobuf and Confluent's wire format: Schema Registry records to JSONValue.
        .target(name: "RecordDecoding", dependencies: ["JSON", "Dates", .product(name: "ExtrasBase64", package: "swift-extras-base64")]),
        .target(
            name: "Mapping", dependencies: ["JSON", "Dates", "Preferences", "FCMTargets", "RecordDecoding", .product(name: "Yams", package: "Yams")]),
        // Android/iOS string resources: parsers, the catalog, lint checks and device previews.
        .target(name: "Localization", dependencies: ["JSON"]),
        // Where the two meet: the keys and argument counts the mappings send, for `lint` and `preview`.
        .target(name: "MappingLocalization", dependencies: ["JSON", "Mapping", "Localization"]),

        // MARK: FCM client
        .target(
            name: "FCM",
            dependencies: [
                "HTTP2", "JSON", "FCMTargets",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),

        // MARK: FCM emulator (tests, demo, `pushbridge emulator`)
        // FCM HTTP v1 over HTTPS + HTTP/2 on loopback, faithful to the documented API.
        .target(
            name: "FCMEmulator",
            dependencies: [
                "JSON",
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),

        // MARK: Operating surface of `pushbridge run`
        // The config file (swift-configuration: environment over file over defaults), JSON logs
        // with tokens redacted, Prometheus metrics, and the /metrics /healthz /readyz endpoint.
        .target(
            name: "Operations",
            dependencies: [
                "JSON", "Dates", "Mapping",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),

        // MARK: Device registry
        // The registry topic materialized in a local SQLite file (its schema and SQL in SQLite/),
        // and the follower that keeps it current.
        .target(
            name: "DeviceRegistry",
            dependencies: ["SQLite", "Kafka", "JSON", "Dates", "Preferences", "Threading", .product(name: "Logging", package: "swift-log")]
        ),

        // MARK: Schema Registry client
        // Writer schemas by ID from a Confluent-compatible registry: cached, fetched once, retried
        // while the registry cannot be reached.
        .target(
            name: "SchemaRegistry",
            dependencies: [
                "HTTP2", "JSON", "RecordDecoding",
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),

        // MARK: Tracing
        // swift-distributed-tracing's Tracer for an event's spans (W3C trace context from its
        // record), exported over OTLP/HTTP JSON with the HTTP2 client (docs/benchmarks.md: why
        // not swift-otel's exporter).
        .target(
            name: "EventTracing",
            dependencies: [
                "Kafka", "HTTP2", "JSON", "Threading",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "W3CTraceContext", package: "swift-w3c-trace-context"),
            ]
        ),

        // MARK: Pipeline
        .target(
            name: "Pipeline",
            dependencies: [
                "Kafka", "FCM", "Mapping", "Dates", "Rules", "Threading", "EventTracing",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),

        // MARK: Process harness (tests and the bench; in no product)
        // Child processes under a watchdog on free loopback ports, and `pushbridge run` as a worker
        // watched from outside (/metrics, /proc). No Testing: the bench links it.
        .target(name: "ProcessHarness", dependencies: ["Threading"]),

        // The composition root: a worker and its parts put together from the config; the replay job.
        .target(
            name: "Jobs",
            dependencies: [
                "Mapping", "Pipeline", "Kafka", "HTTP2", "FCM", "Operations", "DeviceRegistry", "SchemaRegistry", "Threading", "EventTracing",
                "Dates", "Preferences", "Rules", "RulesStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: Executables
        .executableTarget(
            name: "pushbridge",
            dependencies: [
                "Mapping", "Dates", "Jobs",
                "Localization", "MappingLocalization",
                "Pipeline", "Kafka", "HTTP2", "FCM", "FCMEmulator", "Operations", "DeviceRegistry",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            plugins: ["BuildInfo"]
        ),
        // Writes the git commit the executable is built from (`pushbridge --version`).
        .plugin(name: "BuildInfo", capability: .buildTool()),
        .executableTarget(
            name: "pushbridge-bench",
            dependencies: [
                "Kafka", "HTTP2", "JSON", "Mapping", "Dates", "Preferences", "Rules", "RulesStore", "Threading", "FCM", "FCMEmulator",
                "ProcessHarness", "DeviceRegistry", "Pipeline",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Tests
        // Shared test helpers (tansu, nginx, S3, test CAs; re-exports ProcessHarness); in no product.
        .target(
            name: "TestSupport", dependencies: ["ProcessHarness", "Threading"], path: "Tests/TestSupport", exclude: ["Resources"]),
        // Welcome events on a topic and what a group made of them, for the pipeline and end-to-end tests.
        .target(name: "PipelineTestSupport", dependencies: ["Kafka", "FCMEmulator", "Dates"], path: "Tests/PipelineTestSupport"),
        // Unit tests, one target per module: no broker, no server, no process of pushbridge's
        // (a short-lived oracle such as Python's jsonschema or openssl may run).
        // `swift test --skip 'IntegrationTests|EndToEndTests'` runs these alone.
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        // TZif files written byte by byte, the machine's /usr/share/zoneinfo, Foundation's ICU zones as an oracle.
        .testTarget(name: "DatesTests", dependencies: ["Dates", "TestSupport"]),
        // The fact codec and lattice, the verdicts, and the ownership model (owners, claims, crashes, zombies).
        .testTarget(name: "RulesTests", dependencies: ["Rules", "TestSupport"]),
        // The rules store on real SQLite files, against InMemoryRulesState, and killed mid-write.
        .testTarget(name: "RulesStoreTests", dependencies: ["RulesStore", "Rules", "SQLite", "TestSupport", "rules-store-crash-writer"]),
        // A writer RulesStoreCrashTests kill with SIGKILL while it applies batches; in no product.
        .executableTarget(name: "rules-store-crash-writer", dependencies: ["RulesStore", "Rules"], path: "Tests/RulesStoreCrashWriter"),
        .testTarget(name: "ThreadingTests", dependencies: ["Threading", "TestSupport"]),
        .testTarget(name: "HTTP2Tests", dependencies: ["HTTP2", "TestSupport"]),
        .testTarget(name: "FCMTests", dependencies: ["FCM", "FCMEmulator", "HTTP2", "TestSupport"]),
        // The emulator's own parts without a server: its schema table, validator and device notes.
        .testTarget(name: "FCMEmulatorTests", dependencies: ["FCMEmulator", "JSON", "TestSupport"]),
        .testTarget(
            name: "RecordDecodingTests",
            dependencies: ["RecordDecoding", "JSON", "TestSupport", .product(name: "ExtrasBase64", package: "swift-extras-base64")],
            exclude: ["Fixtures", "ProtoFixtures"]),
        .testTarget(
            name: "SchemaRegistryTests",
            dependencies: ["SchemaRegistry", "RecordDecoding", "JSON", "HTTP2", "TestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "MappingTests", dependencies: ["Mapping", "Dates", "Preferences", "FCMEmulator", "pushbridge", "TestSupport"]),
        .testTarget(
            name: "LocalizationTests",
            dependencies: ["Localization", "JSON", "Mapping", "MappingLocalization", "pushbridge", "TestSupport"],
            exclude: ["Fixtures"]  // read by path
        ),
        .testTarget(
            name: "DeviceRegistryTests",
            dependencies: ["DeviceRegistry", "Dates", "Preferences", "Kafka", "TestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "PipelineTests",
            dependencies: [
                "Pipeline", "Kafka", "FCM", "FCMEmulator", "Mapping", "Dates", "Preferences", "Rules", "Threading", "TestSupport",
                "PipelineTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(name: "OperationsTests", dependencies: ["Operations", "TestSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "EventTracingTests",
            dependencies: [
                "EventTracing", "Kafka",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "W3CTraceContext", package: "swift-w3c-trace-context"),
            ]
        ),

        // Integration tests: real brokers (tansu, librdkafka's mock cluster), nginx, the FCM and
        // Schema Registry emulators, proxies; `swift test --filter IntegrationTests`.
        .testTarget(name: "KafkaIntegrationTests", dependencies: ["Kafka", "Threading", "TestSupport"]),
        .testTarget(name: "HTTP2IntegrationTests", dependencies: ["HTTP2", "TestSupport"]),
        .testTarget(name: "FCMIntegrationTests", dependencies: ["FCM", "FCMEmulator", "HTTP2", "JSON", "TestSupport"]),
        .testTarget(
            name: "SchemaRegistryIntegrationTests",
            dependencies: ["SchemaRegistry", "RecordDecoding", "JSON", "HTTP2", "TestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "DeviceRegistryIntegrationTests",
            dependencies: ["DeviceRegistry", "Dates", "Preferences", "Kafka", "TestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "PipelineIntegrationTests",
            dependencies: [
                "Pipeline", "Kafka", "FCM", "FCMEmulator", "JSON", "Mapping", "Dates", "Rules", "RulesStore", "Threading", "TestSupport",
                "PipelineTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // The built `pushbridge` as a separate process (demo, run, replay, the CLI's commands)
        // against tansu and the emulator; and its jobs in this process (ReplayJobTests).
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "pushbridge", "TestSupport", "PipelineTestSupport", "Kafka", "FCM", "FCMEmulator", "Mapping", "Dates", "Pipeline",
                "Localization", "MappingLocalization",
                "Jobs", "Operations", "Rules", "RulesStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
