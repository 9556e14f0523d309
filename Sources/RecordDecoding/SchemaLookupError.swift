/// Why a writer schema could not be had: for the record's reason, not the registry's health.
///
/// A registry that cannot be reached (refused, timed out, 5xx, 429, a refused login) is none
/// of these: the lookup waits and retries, holding the record, because an event must never be
/// dead-lettered for the registry's sake.
public enum SchemaLookupError: Error, Sendable, Equatable {
    /// The registry answered that it has no schema with this ID (Confluent's error 40403).
    case notFound(id: UInt32)
    /// The schema, or one it references, cannot be read.
    case invalid(id: UInt32, SchemaError)
    /// The waiting task was cancelled (the worker is stopping): the record stays unfinished.
    case cancelled
}
