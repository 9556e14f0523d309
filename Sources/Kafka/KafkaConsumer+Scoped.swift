extension KafkaConsumer {
    /// Runs `body` with a new consumer and closes it before returning, whether `body` returned or
    /// threw: for a consumer that asks the cluster questions or commits (`offsets`, a replay's
    /// plan) and is done when `body` is.
    ///
    /// ```swift
    /// let rows = try await KafkaConsumer.withConsumer(configuration: c) { consumer in
    ///     try await GroupOffsets.show(topics: ["events"], consumer: consumer)
    /// }
    /// ```
    ///
    /// - Important: the consumer must not be used once `body` has returned: it is closed.
    /// - Throws: ``KafkaError`` when the consumer cannot be created (`body` is not run), or what
    ///   `body` threw (after the close).
    public static func withConsumer<T>(
        configuration: KafkaConsumerConfiguration,
        errorHandler: @escaping @Sendable (KafkaError) -> Void = { _ in },
        logHandler: (@Sendable (KafkaLogEntry) -> Void)? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (KafkaConsumer) async throws -> T
    ) async throws -> T {
        let consumer = try KafkaConsumer(configuration: configuration, errorHandler: errorHandler, logHandler: logHandler)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(consumer))
        } catch {
            result = .failure(error)
        }
        await consumer.close()
        return try result.get()
    }
}
