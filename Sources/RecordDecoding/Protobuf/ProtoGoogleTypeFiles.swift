/// Google's common types (`google/type/*.proto`, package `google.type`), built in: serializers
/// do not register them as references (confluent-kafka's `_is_builtin` skips `google/type/`, as
/// it skips `google/protobuf/` and `confluent/`), and Confluent's Schema Registry builds the same
/// files in (`ProtobufSchema.java`'s known dependencies), so a schema that imports
/// `google/type/money.proto` arrives without it.
///
/// Written from googleapis' files (github.com/googleapis/googleapis, `google/type`): names,
/// numbers, types and oneofs, each file's messages and enums in its order, so message indexes
/// into them match the real files. Confluent's sixteen, and `localized_text.proto`, which the
/// serializers skip too. They have no special form: each decodes as the message it is, so a
/// `Money` is `{currency_code, units, nanos}` and a `DayOfWeek` its symbol.
enum ProtoGoogleTypeFiles {
    /// Where they are imported from.
    static let folder = "google/type/"

    /// The built-in file imported as `path`, if it is one.
    static func file(_ path: String) -> ProtoFile? {
        guard path.hasPrefix(folder) else { return nil }
        let name = String(path.dropFirst(folder.count))
        switch name {
        case "calendar_period.proto":
            return enumFile(name, "CalendarPeriod", ["CALENDAR_PERIOD_UNSPECIFIED", "DAY", "WEEK", "FORTNIGHT", "MONTH", "QUARTER", "HALF", "YEAR"])
        case "color.proto":
            let alpha = ProtoField(name: "alpha", number: 4, kind: .message, typeName: ".google.protobuf.FloatValue")
            let fields = numbered([("red", .float), ("green", .float), ("blue", .float)]) + [alpha]
            return file(name, [ProtoMessage(name: "Color", fields: fields)], imports: ["google/protobuf/wrappers.proto"])
        case "date.proto": return messageFile(name, "Date", ymd)
        case "datetime.proto": return dateTime
        case "dayofweek.proto":
            let days = ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"]
            return enumFile(name, "DayOfWeek", ["DAY_OF_WEEK_UNSPECIFIED"] + days)
        case "decimal.proto": return messageFile(name, "Decimal", [("value", .string)])
        case "expr.proto":
            return messageFile(name, "Expr", [("expression", .string), ("title", .string), ("description", .string), ("location", .string)])
        case "fraction.proto": return messageFile(name, "Fraction", [("numerator", .int64), ("denominator", .int64)])
        case "interval.proto":
            let fields = ["start_time", "end_time"].enumerated().map {
                ProtoField(name: $1, number: Int32($0 + 1), kind: .message, typeName: ".google.protobuf.Timestamp")
            }
            return file(name, [ProtoMessage(name: "Interval", fields: fields)], imports: ["google/protobuf/timestamp.proto"])
        case "latlng.proto": return messageFile(name, "LatLng", [("latitude", .double), ("longitude", .double)])
        case "localized_text.proto": return messageFile(name, "LocalizedText", [("text", .string), ("language_code", .string)])
        case "money.proto": return messageFile(name, "Money", [("currency_code", .string), ("units", .int64), ("nanos", .int32)])
        case "month.proto": return enumFile(name, "Month", ["MONTH_UNSPECIFIED"] + months)
        case "phone_number.proto": return phoneNumber
        case "postal_address.proto": return postalAddress
        case "quaternion.proto": return messageFile(name, "Quaternion", [("x", .double), ("y", .double), ("z", .double), ("w", .double)])
        case "timeofday.proto": return messageFile(name, "TimeOfDay", hms)
        default: return nil
        }
    }

    private static let ymd: [(String, ProtoField.Kind)] = [("year", .int32), ("month", .int32), ("day", .int32)]
    private static let hms: [(String, ProtoField.Kind)] = [("hours", .int32), ("minutes", .int32), ("seconds", .int32), ("nanos", .int32)]
    private static let months = [
        "JANUARY", "FEBRUARY", "MARCH", "APRIL", "MAY", "JUNE", "JULY", "AUGUST", "SEPTEMBER", "OCTOBER", "NOVEMBER", "DECEMBER",
    ]

    /// A civil date and time, and the UTC offset or time zone it is in (or neither: local time).
    private static var dateTime: ProtoFile {
        let offset = [
            ProtoField(name: "utc_offset", number: 8, kind: .message, typeName: ".google.protobuf.Duration", oneofIndex: 0),
            ProtoField(name: "time_zone", number: 9, kind: .message, typeName: ".google.type.TimeZone", oneofIndex: 0),
        ]
        return file(
            "datetime.proto",
            [
                ProtoMessage(name: "DateTime", fields: numbered(ymd + hms) + offset, oneofs: ["time_offset"]),
                ProtoMessage(name: "TimeZone", fields: numbered([("id", .string), ("version", .string)])),
            ], imports: ["google/protobuf/duration.proto"])
    }

    /// An E.164 number or a short code (a oneof), and an extension.
    private static var phoneNumber: ProtoFile {
        let shortCode = ProtoMessage(name: "ShortCode", fields: numbered([("region_code", .string), ("number", .string)]))
        let fields = [
            ProtoField(name: "e164_number", number: 1, kind: .string, oneofIndex: 0),
            ProtoField(name: "short_code", number: 2, kind: .message, typeName: ".google.type.PhoneNumber.ShortCode", oneofIndex: 0),
            ProtoField(name: "extension", number: 3, kind: .string),
        ]
        return file("phone_number.proto", [ProtoMessage(name: "PhoneNumber", fields: fields, nestedMessages: [shortCode], oneofs: ["kind"])])
    }

    private static var postalAddress: ProtoFile {
        var fields = numbered([
            ("revision", .int32), ("region_code", .string), ("language_code", .string), ("postal_code", .string),
            ("sorting_code", .string), ("administrative_area", .string), ("locality", .string), ("sublocality", .string),
            ("address_lines", .string), ("recipients", .string), ("organization", .string),
        ])
        fields[8].label = .repeated
        fields[9].label = .repeated
        return file("postal_address.proto", [ProtoMessage(name: "PostalAddress", fields: fields)])
    }

    /// Fields numbered from 1 in the order given, as google/type numbers them.
    private static func numbered(_ fields: [(String, ProtoField.Kind)]) -> [ProtoField] {
        fields.enumerated().map { ProtoField(name: $1.0, number: Int32($0 + 1), kind: $1.1) }
    }

    /// A file of one message whose fields are `fields`, numbered from 1.
    private static func messageFile(_ name: String, _ message: String, _ fields: [(String, ProtoField.Kind)]) -> ProtoFile {
        file(name, [ProtoMessage(name: message, fields: numbered(fields))])
    }

    /// A file of one enum whose symbols are `symbols`, numbered from 0.
    private static func enumFile(_ name: String, _ enumName: String, _ symbols: [String]) -> ProtoFile {
        file(name, enums: [ProtoEnum(name: enumName, numbering: symbols)])
    }

    private static func file(_ name: String, _ messages: [ProtoMessage] = [], enums: [ProtoEnum] = [], imports: [String] = []) -> ProtoFile {
        ProtoFile(name: folder + name, package: "google.type", dependencies: imports, messages: messages, enums: enums, syntax: .proto3)
    }
}

extension ProtoEnum {
    /// An enum whose symbols are numbered from 0 in the order given (the built-in files' are).
    init(name: String, numbering symbols: [String]) {
        self.init(name: name, values: symbols.enumerated().map { ($1, Int32($0)) })
    }
}
