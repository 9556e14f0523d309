import JSON
import RecordDecoding

/// What one answer of a Confluent-compatible Schema Registry means. Pure.
///
/// Sources: Confluent's Schema Registry API reference (docs.confluent.io,
/// schema-registry/develop/api): `GET /schemas/ids/{id}` answers `{schema, schemaType,
/// references}` (`schemaType` absent for Avro), `GET /subjects/{subject}/versions/{version}`
/// the same plus `subject`, `version`, `id`; errors are `{"error_code": N, "message": …}` with
/// 40401 subject not found, 40402 version not found, 40403 schema not found.
enum RegistryAnswer: Equatable {
    /// The schema's text, type and references.
    case schema(text: String, kind: RegisteredSchema.Kind, references: [Reference])
    /// The registry says it does not exist: the record's fault, for good.
    case missing(errorCode: Int, message: String)
    /// The schema exists and cannot be used (a type pushbridge does not read, a broken body).
    case unusable(String)
    /// Try again later: the registry is down, overloaded, refusing our login, or answered
    /// something that is not the registry's API (a proxy's 404 page: a wrong URL is the
    /// operator's to fix, not a reason to dead-letter events).
    case retry(String)

    /// A schema reference: the name the schema uses for it, and where it is registered.
    struct Reference: Equatable {
        var name: String
        var subject: String
        var version: Int
    }

    init(status: Int, body: [UInt8]) {
        let document = try? JSONParser.parse(body)
        switch status {
        case 200:
            guard let document, case .string(let text)? = document["schema"] else {
                self = .retry("the registry answered 200 without a schema: is schema_registry.url the registry's?")
                return
            }
            let kind: RegisteredSchema.Kind
            switch document["schemaType"] {
            case nil, .null?: kind = .avro
            case .string(let name)?:
                guard let known = RegisteredSchema.Kind(rawValue: name) else {
                    self = .unusable("schemaType \(name) is not one pushbridge reads (AVRO, PROTOBUF, JSON)")
                    return
                }
                kind = known
            case let other?:
                self = .unusable("schemaType is \(other.typeName), not a string")
                return
            }
            var references: [Reference] = []
            if case .array(let items)? = document["references"] {
                for item in items {
                    guard case .string(let name)? = item["name"], case .string(let subject)? = item["subject"],
                        case .int(let version)? = item["version"]
                    else {
                        self = .unusable("a reference without name, subject and version")
                        return
                    }
                    references.append(Reference(name: name, subject: subject, version: Int(version)))
                }
            }
            self = .schema(text: text, kind: kind, references: references)
        case 404:
            if let document, case .int(let code)? = document["error_code"], [40401, 40402, 40403].contains(code) {
                self = .missing(errorCode: Int(code), message: document["message"]?.stringValue ?? "not found")
            } else {
                self = .retry("the registry answered 404 without the registry's error body: is schema_registry.url right?")
            }
        case 401, 403:
            self = .retry("the registry refused our credentials (HTTP \(status)): check schema_registry.username and password")
        default:
            let message = document?["message"]?.stringValue.map { ": \($0)" } ?? ""
            self = .retry("the registry answered HTTP \(status)\(message)")
        }
    }
}
