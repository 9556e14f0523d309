/// What the grammar reads before names are resolved: the model's shapes plus the places and
/// written type names resolution needs. Names can only be resolved once the whole file is read
/// (a field may use a type declared further down, or the package may come late).

/// How a field names its type, before resolution.
enum ProtoTextTypeReference: Sendable, Equatable {
    /// A scalar: ``ProtoField/kind`` already says it all.
    case scalar
    /// A message or enum name as written (`Money`, `common.Money`, `.acme.Money`).
    case written(String)
    /// A message the parser made inside the field's own message: a group's, or a map's entry.
    case nested(String)
}

struct ProtoTextField: Sendable {
    /// Complete except, for `.written` references, ``ProtoField/kind`` and ``ProtoField/typeName``.
    var field: ProtoField
    var type: ProtoTextTypeReference
    /// Where the field's type is written: unresolvable names are reported there.
    var typePosition: ProtoTextPosition
    var namePosition: ProtoTextPosition
    var packedPosition: ProtoTextPosition?
}

struct ProtoTextEnum: Sendable {
    var value: ProtoEnum
    var position: ProtoTextPosition
}

struct ProtoTextMessage: Sendable {
    var name: String
    var position: ProtoTextPosition
    var fields: [ProtoTextField] = []
    var nestedMessages: [ProtoTextMessage] = []
    var nestedEnums: [ProtoTextEnum] = []
    var oneofs: [String] = []
    var isMapEntry = false
}

/// A definition that is no type but takes a name in its scope (a `service`): protobuf's name
/// lookup stops at it, so resolution must know it is there.
struct ProtoTextService: Sendable {
    var name: String
    var position: ProtoTextPosition
}

struct ProtoTextFile: Sendable {
    var syntax = ProtoFile.Syntax.proto2
    var package = ""
    var packagePosition = ProtoTextPosition(line: 1, column: 1)
    var dependencies: [String] = []
    var messages: [ProtoTextMessage] = []
    var enums: [ProtoTextEnum] = []
    var services: [ProtoTextService] = []
}
