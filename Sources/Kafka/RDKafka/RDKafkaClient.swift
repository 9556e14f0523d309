import CRdKafka

/// Owns one `rd_kafka_t` handle and destroys it in `deinit`.
///
/// librdkafka's handle API is thread-safe, so this class is `@unchecked Sendable`: it has no
/// mutable Swift state, and the pointer is only lent out through ``withHandle(_:)``.
final class RDKafkaClient: @unchecked Sendable {
    enum Kind {
        case producer, consumer

        var cValue: rd_kafka_type_t { self == .producer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER }
    }

    private let handle: OpaquePointer
    /// What the handle's opaque points to, when this client owns it: released after
    /// `rd_kafka_destroy` returns (stored properties outlive `deinit`'s body), so no callback can
    /// find it gone.
    private let opaqueOwner: AnyObject?

    private init(handle: OpaquePointer, opaqueOwner: AnyObject?) {
        self.handle = handle
        self.opaqueOwner = opaqueOwner
    }

    deinit {
        rd_kafka_destroy(handle)
    }

    /// Creates a handle from string properties.
    ///
    /// - Parameters:
    ///   - opaque: stored with `rd_kafka_conf_set_opaque`; the caller guarantees that the
    ///     object behind it outlives this client, or passes it as `opaqueOwner`.
    ///   - opaqueOwner: the object behind `opaque`, kept alive by this client until its handle
    ///     is destroyed.
    ///   - configure: installs C callbacks on the `rd_kafka_conf_t` before the handle exists.
    /// - Throws: ``KafkaError`` with code `.configuration` naming the bad property, or
    ///   librdkafka's message when the handle cannot be created. Nothing leaks on failure.
    static func make(
        _ kind: Kind,
        properties: [(key: String, value: String)],
        opaque: UnsafeMutableRawPointer? = nil,
        opaqueOwner: AnyObject? = nil,
        configure: (OpaquePointer) -> Void = { _ in }
    ) throws(KafkaError) -> RDKafkaClient {
        let conf = rd_kafka_conf_new()!
        for (key, value) in properties {
            if let refusal = set(conf, key, value) {
                rd_kafka_conf_destroy(conf)
                throw KafkaError(code: .configuration, message: "librdkafka property '\(key)': \(refusal)")
            }
        }
        if let opaque { rd_kafka_conf_set_opaque(conf, opaque) }
        configure(conf)
        // On success, rd_kafka_new takes ownership of conf; on failure we still own it.
        var errorBuffer = [CChar](repeating: 0, count: 512)
        guard let handle = rd_kafka_new(kind.cValue, conf, &errorBuffer, errorBuffer.count) else {
            rd_kafka_conf_destroy(conf)
            throw KafkaError(code: .configuration, message: "cannot create Kafka client: \(text(errorBuffer))")
        }
        return RDKafkaClient(handle: handle, opaqueOwner: opaqueOwner)
    }

    /// Lends the `rd_kafka_t` pointer for the duration of `body`.
    func withHandle<T, E: Error>(_ body: (OpaquePointer) throws(E) -> T) throws(E) -> T {
        try body(handle)
    }

    /// The error that made this instance unusable, if any.
    func fatalError() -> KafkaError? {
        var buffer = [CChar](repeating: 0, count: 512)
        let err = rd_kafka_fatal_error(handle, &buffer, buffer.count)
        guard err != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        return KafkaError(code: .init(err), message: Self.text(buffer), isFatal: true)
    }

    /// Whether the linked librdkafka takes `value` for the configuration property `key` (newer
    /// properties are unknown to older libraries, which refuse them).
    static func accepts(property key: String, value: String) -> Bool {
        let conf = rd_kafka_conf_new()!
        defer { rd_kafka_conf_destroy(conf) }
        return set(conf, key, value) == nil
    }

    /// Sets one property on `conf`; librdkafka's reason if it refuses.
    private static func set(_ conf: OpaquePointer, _ key: String, _ value: String) -> String? {
        var errorBuffer = [CChar](repeating: 0, count: 512)
        guard rd_kafka_conf_set(conf, key, value, &errorBuffer, errorBuffer.count) != RD_KAFKA_CONF_OK else { return nil }
        return text(errorBuffer)
    }

    /// The NUL-terminated text librdkafka wrote into `buffer`.
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
    }

    /// The linked librdkafka's version string, e.g. "2.0.2".
    static var libraryVersion: String { String(cString: rd_kafka_version_str()) }
}
