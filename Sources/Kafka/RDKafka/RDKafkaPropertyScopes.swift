import CRdKafka

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which client each librdkafka property is for, as the linked library's own table says
/// (`rd_kafka_conf_properties_show`, the table CONFIGURATION.md is made from: `C` consumer, `P`
/// producer, `*` both). A consumer handed a producer property, or the other way round, ignores it
/// and prints a `CONFWARN`; so each client is given only the properties it knows.
enum RDKafkaPropertyScopes {
    enum Scope: Equatable {
        case consumer, producer, both
    }

    /// Every property (global and topic-level, aliases included) by name. Empty if the table
    /// cannot be read, and then every property goes to both clients, as before.
    static let table: [String: Scope] = parse(libraryTable())

    /// Whether a client of `kind` takes `property`; true for a name the table does not have
    /// (librdkafka refuses an unknown name itself, naming it).
    static func applies(_ property: String, to kind: RDKafkaClient.Kind) -> Bool {
        switch table[property] {
        case .consumer: kind == .consumer
        case .producer: kind == .producer
        case .both, nil: true
        }
    }

    /// Rows `name | C/P/* | range | default | …`; every other line is skipped.
    static func parse(_ text: String) -> [String: Scope] {
        var table: [String: Scope] = [:]
        for line in text.split(separator: "\n") {
            let columns = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard columns.count == 3 else { continue }
            let name = trimmed(columns[0])
            let scope: Scope
            switch trimmed(columns[1]) {
            case "C": scope = .consumer
            case "P": scope = .producer
            case "*": scope = .both
            default: continue
            }
            if !name.isEmpty, !name.contains(" ") { table[name] = scope }
        }
        return table
    }

    private static func trimmed(_ s: Substring) -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(s.drop(while: blank).reversed().drop(while: blank).reversed())
    }

    /// The table as the library prints it (into memory).
    private static func libraryTable() -> String {
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return "" }
        rd_kafka_conf_properties_show(stream)
        fclose(stream)
        defer { free(buffer) }
        return buffer.map { String(cString: $0) } ?? ""
    }
}
