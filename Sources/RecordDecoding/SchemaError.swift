/// Why a schema could not be read, or a record could not be decoded with its schema.
///
/// Both are permanent: the same bytes fail the same way on every attempt, so the event is
/// dead-lettered with ``description`` as its reason (a registry that cannot be reached is not
/// this error; it is retried). The text names the place: a field path such as `/order/items/2`
/// and, for a record, the byte offset.
public struct SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
