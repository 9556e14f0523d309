/// One type of a parsed Avro schema, kept in a flat table where types name each other by index.
///
/// A named type is a single entry however often it is used, so a record that contains itself
/// (a linked list) is an index pointing back, not a reference cycle, and the table is a plain
/// `Sendable` value the decoder can walk through an unsafe buffer without retaining anything.
struct AvroNode: Sendable {
    enum Kind: UInt8, Sendable {
        case null, boolean, int, long, float, double, bytes, string
        case record, enumeration, array, map, union, fixed
    }

    var kind: Kind
    var logical: AvroLogicalType = .none
    /// Record: the field types; union: the branches; array: `[items]`; map: `[values]`.
    var children: [Int] = []
    /// Record: the field names; enum: the symbols.
    var names: [String] = []
    /// Record: the field names as UTF-8, to look them up in a `JSONPathSet` without a String.
    var nameBytes: [[UInt8]] = []
    /// Fixed: the size in bytes.
    var size = 0
    /// Named types: the full name (`com.acme.OrderShipped`).
    var fullName: String?
    /// The type always encodes in zero bytes (null, a fixed of size 0, a record of only such
    /// fields). An array of these carries nothing but its count, so the decoder skips it
    /// without walking the items and bounds how many it builds (see ``AvroLimits``).
    var isEmpty = false

    init(kind: Kind, logical: AvroLogicalType = .none) {
        self.kind = kind
        self.logical = logical
    }
}

/// The logical types of Avro 1.11 that change how a value reads. The parser keeps one only
/// when it fits its underlying type; anything else decodes as the underlying type, as the
/// specification says.
enum AvroLogicalType: Sendable, Equatable {
    case none
    /// On bytes or fixed: a two's-complement big-endian unscaled integer.
    case decimal(precision: Int, scale: Int)
    /// On string (as is), or on a fixed of 16 bytes (written as the usual hex text).
    case uuid
    /// On int: days since 1970-01-01.
    case date
    /// On int: milliseconds after midnight.
    case timeMillis
    /// On long: microseconds after midnight.
    case timeMicros
    /// On long: since the epoch, UTC.
    case timestampMillis, timestampMicros
    /// On long: since the epoch in an unnamed local time zone (no `Z`).
    case localTimestampMillis, localTimestampMicros
}

/// Bounds on what hostile bytes (or a hostile schema) can make the decoder do.
enum AvroLimits {
    /// Records, arrays and maps nested deeper than this fail: a recursive schema would
    /// otherwise let a record's bytes pick the depth of the decoder's recursion.
    static let maxDepth = 64
    /// How many items of zero-byte types (``AvroNode/isEmpty``) one decode builds at most: a
    /// block count of 2^62 nulls costs one varint on the wire, so the count alone cannot bound it.
    static let maxEmptyItems = 65_536
    /// The largest decimal precision a schema may declare: the decimal text costs time
    /// quadratic in the digits, and the precision bounds how many bytes a value may have.
    static let maxDecimalPrecision = 1_000
}
