/// Why the registry's store or follower failed.
///
/// `code` says what kind of failure it is; `message` keeps SQLite's or librdkafka's own words.
public struct RegistryError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        /// The file is not a SQLite database, is damaged, or was written by another format
        /// version. Delete it: the follower loads the registry again from the topic.
        public static let unusableFile = Code(name: "unusable file")
        /// The file cannot be opened, read or written (permissions, disk full, a missing folder).
        public static let io = Code(name: "I/O")
        /// The file was filled from another topic than the one asked for.
        public static let otherTopic = Code(name: "other topic")
        /// The registry topic does not exist.
        public static let missingTopic = Code(name: "missing topic")
        /// Kafka failed (the consumer could not start, or ended with a fatal error).
        public static let kafka = Code(name: "kafka")
        public var description: String { name }
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "registry: \(message)" }
}
