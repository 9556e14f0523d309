import Kafka

extension KafkaConsumerConfiguration {
    /// A consumer that reads partitions on its own (assign mode) or only asks the cluster, as the
    /// tools (`replay`, `offsets`) connect: with the config's brokers and Kafka properties.
    /// - Parameter group: the group whose offsets it commits or reads; nil: none.
    public static func standalone(brokers: [String], properties: [String: String], group: String? = nil) -> KafkaConsumerConfiguration {
        var c = KafkaConsumerConfiguration(bootstrapServers: brokers, groupID: group)
        c.properties = properties
        c.clientID = "pushbridge-tool"
        return c
    }
}
