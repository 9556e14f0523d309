import FCM
import Kafka

// What the pipeline needs from the outside world. The real implementations are FCMClient and
// KafkaProducer; tests of the pipeline's logic substitute their own.

/// Sends one FCM message, with retries, and says how it ended.
public protocol PushSending: Sendable {
    /// - Parameter target: who the message goes to, so a throttled device or topic is backed
    ///   off on its own.
    func send(_ message: [UInt8], to target: SendTarget?, validateOnly: Bool) async -> FCMClient.SendResult

    /// Sends that may be in flight now (FCM's answer times decide it for ``FCMClient``): how
    /// many events the pipeline processes at once.
    var concurrencyLimit: Int { get }
}

/// Writes one record to Kafka and waits until the broker has it.
public protocol RecordProducing: Sendable {
    func send(_ record: KafkaProducerRecord) async throws(KafkaError) -> KafkaDeliveryReport
}

extension FCMClient: PushSending {}
extension KafkaProducer: RecordProducing {}
