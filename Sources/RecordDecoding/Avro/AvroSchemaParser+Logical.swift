import JSON

/// Logical types: which ones apply to which underlying types, and the checks on a decimal.
extension AvroSchemaParser {
    /// The logical type `json` declares for its underlying `kind`. An unknown logical type, or
    /// one on a type it does not fit, is ignored (the value decodes as the underlying type), as
    /// the specification says; a decimal whose attributes are wrong is a schema error.
    func logicalType(_ json: JSONValue, kind: AvroNode.Kind, fixedSize: Int) throws(SchemaError) -> AvroLogicalType {
        guard case .string(let name)? = json["logicalType"] else { return .none }
        switch (name, kind) {
        case ("decimal", .bytes): return try decimal(json, fixedSize: nil)
        case ("decimal", .fixed): return try decimal(json, fixedSize: fixedSize)
        case ("uuid", .string): return .uuid
        case ("uuid", .fixed) where fixedSize == 16: return .uuid
        case ("date", .int): return .date
        case ("time-millis", .int): return .timeMillis
        case ("time-micros", .long): return .timeMicros
        case ("timestamp-millis", .long): return .timestampMillis
        case ("timestamp-micros", .long): return .timestampMicros
        case ("local-timestamp-millis", .long): return .localTimestampMillis
        case ("local-timestamp-micros", .long): return .localTimestampMicros
        default: return .none
        }
    }

    /// A decimal needs a precision from 1 up (at most ``AvroLimits/maxDecimalPrecision``), a
    /// scale from 0 to the precision, and, on a fixed, a precision the fixed's bytes can hold:
    /// at most ⌊log₁₀(2^(8·size−1) − 1)⌋ digits.
    private func decimal(_ json: JSONValue, fixedSize: Int?) throws(SchemaError) -> AvroLogicalType {
        guard case .int(let precision)? = json["precision"], precision >= 1 else {
            throw failure("a decimal needs a \"precision\" that is a positive integer")
        }
        guard precision <= AvroLimits.maxDecimalPrecision else {
            throw failure("a decimal's precision \(precision) is above the \(AvroLimits.maxDecimalPrecision) digits supported")
        }
        var scale: Int64 = 0
        if let declared = json["scale"] {
            guard case .int(let value) = declared, value >= 0 else { throw failure("a decimal's \"scale\" must be a non-negative integer") }
            scale = value
        }
        guard scale <= precision else { throw failure("a decimal's scale \(scale) is more than its precision \(precision)") }
        if let size = fixedSize {
            // (8·size − 1)·log₁₀2 is never a whole number for size ≥ 1, so rounding down is exact.
            // A fixed too large to matter is capped before the conversion to Int.
            let bound = (Double(size) * 8 - 1) * 0.301_029_995_663_981_2
            let digits = size == 0 ? 0 : bound >= 100_000 ? 100_000 : Int(bound.rounded(.down))
            guard precision <= digits else {
                throw failure("a decimal of precision \(precision) does not fit a fixed of \(size) bytes (at most \(digits) digits)")
            }
        }
        return .decimal(precision: Int(precision), scale: Int(scale))
    }
}
