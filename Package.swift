// swift-tools-version: 6.1
import PackageDescription

// Layers, bottom to top (see docs/architecture.md):
//   CRdKafka, CCurl        C system libraries with typed shims
//   Kafka, HTTP2           Swift wrappers that own the C resources
//   JSON, Mapping          pure: event + mapping files -> FCM v1 messages
//   Pipeline               consume -> map -> send -> commit after ack (offset tracking)
//   pushbridge             the executable (CLI)
let package = Package(
    name: "pushbridge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushbridge", targets: ["pushbridge"]),
        .executable(name: "pushbridge-bench", targets: ["pushbridge-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
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

        // MARK: Wrappers
        // Dedicated OS threads for blocking C loops, shared by both wrappers.
        .target(name: "Threading"),
        .target(
            name: "Kafka",
            dependencies: ["CRdKafka", "Threading", .product(name: "DequeModule", package: "swift-collections")]
        ),
        .target(name: "HTTP2", dependencies: ["CCurl", "Threading"]),

        // MARK: Pure mapping core
        // A strict JSON parser/writer with exact numbers, shared by mapping, FCM and the emulator.
        .target(name: "JSON"),
        .target(name: "Mapping", dependencies: ["JSON", .product(name: "Yams", package: "Yams")]),

        // MARK: FCM client
        .target(
            name: "FCM",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),

        // MARK: Pipeline
        .target(
            name: "Pipeline",
            dependencies: [.product(name: "DequeModule", package: "swift-collections")]
        ),

        // MARK: Executables
        .executableTarget(
            name: "pushbridge",
            dependencies: [
                "Mapping",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "pushbridge-bench",
            dependencies: ["Kafka", "HTTP2", "Mapping"]
        ),

        // MARK: Tests
        // Shared test helpers (child processes, free ports); in no product.
        .target(name: "TestSupport", path: "Tests/TestSupport", exclude: ["Resources"]),
        .testTarget(name: "KafkaTests", dependencies: ["Kafka", "TestSupport"]),
        .testTarget(name: "HTTP2Tests", dependencies: ["HTTP2", "TestSupport"]),
        .testTarget(name: "MappingTests", dependencies: ["Mapping", "pushbridge", "TestSupport"]),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline"]),
        .testTarget(name: "FCMTests", dependencies: ["FCM", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
