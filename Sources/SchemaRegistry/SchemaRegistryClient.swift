import CoreMetrics
import ExtrasBase64
import Foundation
import HTTP2
import Logging
import RecordDecoding

/// Writer schemas by ID from a Confluent-compatible Schema Registry (Confluent's, Redpanda's,
/// Karapace, Apicurio's `ccompat` API): `GET /schemas/ids/{id}`, then each reference by
/// `GET /subjects/{subject}/versions/{version}`, every level of them.
///
/// Each schema is fetched once and kept (``SchemaCache``). While the registry cannot be reached
/// or refuses the login, ``schema(id:)`` waits and retries with a growing backoff, for as long
/// as it takes: the record it is for stays unfinished and its partition commits nothing past it,
/// so an outage holds events and never dead-letters them. Only the registry's own word that a
/// schema does not exist, or a schema that cannot be read, fails a record.
public final class SchemaRegistryClient: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// The registry's base URL, e.g. `https://psrc-xxxx.europe-west1.gcp.confluent.cloud`.
        public var url: String
        /// HTTP basic auth (Confluent Cloud: an API key and its secret).
        public var username: String?
        public var password: String?
        /// PEM CAs to trust instead of the system's.
        public var caFile: String?
        public var requestTimeout: Duration = .seconds(10)
        public var initialBackoff: Duration = .milliseconds(200)
        public var maxBackoff: Duration = .seconds(30)

        public init(url: String, username: String? = nil, password: String? = nil, caFile: String? = nil) {
            self.url = url
            self.username = username
            self.password = password
            self.caFile = caFile
        }
    }

    public let configuration: Configuration
    /// The longest one request may take, whatever the configuration says.
    public static let maxRequestTimeout = Duration.seconds(10)
    private let http: HTTP2Client
    private let cache = SchemaCache()
    private let logger: Logger
    private let base: String
    private let authorization: String?
    private let fetched = Counter(label: "pushbridge_schema_registry_fetches_total", dimensions: [("result", "ok")])
    private let fetchFailed = Counter(label: "pushbridge_schema_registry_fetches_total", dimensions: [("result", "failed")])
    private let fetchRetried = Counter(label: "pushbridge_schema_registry_fetches_total", dimensions: [("result", "retried")])

    public init(configuration: Configuration, logger: Logger) throws(HTTP2ClientError) {
        self.configuration = configuration
        var http = HTTP2Client.Configuration(caFile: configuration.caFile)
        // At most 10 s: a request under way is not cut short by a stopping worker (the HTTP
        // client does not observe cancellation), and the shutdown's final commit waits for it.
        http.requestTimeout = min(configuration.requestTimeout, Self.maxRequestTimeout)
        http.connectTimeout = min(configuration.requestTimeout, .seconds(10))
        http.threads = 1
        http.maxConnections = 4
        // A connection silent with a request waiting is closed as dead; the retry takes another.
        http.onDeadConnection = { dead in
            logger.warning(
                "Schema Registry connection closed as dead: \(dead)", metadata: ["host": "\(dead.authority)", "streams": "\(dead.requests)"])
            Counter(label: "pushbridge_dead_connections_total", dimensions: [("host", dead.authority)]).increment()
        }
        self.http = try HTTP2Client(configuration: http)
        self.logger = logger
        var base = configuration.url
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        if let user = configuration.username {
            authorization = "Basic " + Base64.encodeToString(bytes: Array("\(user):\(configuration.password ?? "")".utf8))
        } else {
            authorization = nil
        }
    }

    /// Schemas held in memory now.
    public var cachedSchemas: Int { cache.count }

    /// The writer schema with `id`, waiting while the registry cannot be reached.
    /// - Throws: ``SchemaLookupError``: not found or unreadable (the record's fault), or cancelled.
    public func schema(id: UInt32) async throws(SchemaLookupError) -> WriterSchema {
        try await cache.schema(id) { () async throws(SchemaLookupError) -> WriterSchema in
            let registered = try await self.registered(id: id)
            do throws(SchemaError) {
                let schema = try WriterSchema(registered)
                self.fetched.increment()
                return schema
            } catch {
                self.fetchFailed.increment()
                throw .invalid(id: id, error)
            }
        }
    }

    /// The writer schema with `id`, or why it cannot be had, if the answer is held now
    /// (nothing to wait for); nil: ``schema(id:)`` must ask the registry.
    public func cachedSchema(id: UInt32) -> Result<WriterSchema, SchemaLookupError>? {
        cache.cached(id)
    }

    /// Stops the HTTP client; lookups under way fail as cancelled.
    public func shutdown() async { await http.shutdown() }

    /// The schema `id` with its references, fetched.
    func registered(id: UInt32) async throws(SchemaLookupError) -> RegisteredSchema {
        let (text, kind, references) = try await answer(path: "/schemas/ids/\(id)", id: id, what: "schema \(id)")
        var collected: [RegisteredSchema.Reference] = []
        var seen: Set<String> = []
        try await collect(references, into: &collected, seen: &seen, id: id, depth: 0)
        return RegisteredSchema(id: id, kind: kind, text: text, references: collected)
    }

    /// Appends `references` and theirs, dependencies before dependents, each once.
    private func collect(
        _ references: [RegistryAnswer.Reference], into collected: inout [RegisteredSchema.Reference], seen: inout Set<String>,
        id: UInt32, depth: Int
    ) async throws(SchemaLookupError) {
        guard depth < 32 else { throw .invalid(id: id, SchemaError("references nest deeper than 32 levels (a cycle?)")) }
        for reference in references where !seen.contains(reference.name) {
            seen.insert(reference.name)
            let path = "/subjects/\(Self.escape(reference.subject))/versions/\(reference.version)"
            let (text, _, nested) = try await answer(
                path: path, id: id, what: "reference \(reference.name) (\(reference.subject) v\(reference.version))")
            try await collect(nested, into: &collected, seen: &seen, id: id, depth: depth + 1)
            collected.append(RegisteredSchema.Reference(name: reference.name, text: text))
        }
    }

    /// GETs `path` until the registry gives a usable answer or its word that there is none.
    private func answer(
        path: String, id: UInt32, what: String
    ) async throws(SchemaLookupError) -> (
        String, RegisteredSchema.Kind, [RegistryAnswer.Reference]
    ) {
        var backoff = configuration.initialBackoff
        var attempts = 0
        var notFound = 0
        while true {
            if Task.isCancelled { throw .cancelled }
            attempts += 1
            let why: String
            var wait = backoff * Double.random(in: 0.5...1.0)
            var headers: HTTPHeaders = ["accept": "application/vnd.schemaregistry.v1+json, application/json"]
            if let authorization { headers.add(name: "authorization", value: authorization) }
            let answer: RegistryAnswer
            do throws(HTTP2ClientError) {
                let response = try await http.send(HTTPRequest(method: "GET", url: base + path, headers: headers))
                answer = RegistryAnswer(status: response.status, body: response.body)
            } catch {
                // Shut down: the worker is stopping, and no retry can succeed.
                if error.code == .shutdown { throw .cancelled }
                answer = .retry("\(error)")
            }
            switch answer {
            case .schema(let text, let kind, let references):
                if attempts > 1 { logger.info("the Schema Registry answers again", metadata: ["schema_id": "\(id)"]) }
                return (text, kind, references)
            case .missing(let code, let message):
                // A registry's followers can lag its leader for a moment after a schema is
                // registered: its "not found" is believed on the third answer, 3 s later.
                if notFound < 2 {
                    notFound += 1
                    wait = .seconds(notFound)
                    why = "the registry says \(what) does not exist (error \(code)); asking again, in case it was just registered"
                    break
                }
                fetchFailed.increment()
                if path.hasPrefix("/schemas/ids/") && code == 40403 { throw .notFound(id: id) }
                throw .invalid(id: id, SchemaError("\(what): \(message) (error \(code))"))
            case .unusable(let reason):
                fetchFailed.increment()
                throw .invalid(id: id, SchemaError("\(what): \(reason)"))
            case .retry(let reason):
                why = reason
            }
            fetchRetried.increment()
            logger.warning(
                "cannot fetch from the Schema Registry; the records that need it wait",
                metadata: ["schema_id": "\(id)", "what": "\(what)", "attempt": "\(attempts)", "error": "\(why)", "retry_in": "\(backoff)"])
            do {
                try await Task.sleep(for: wait)
            } catch {
                throw .cancelled
            }
            if notFound == 0 { backoff = min(backoff * 2, configuration.maxBackoff) }
        }
    }

    /// A subject in a URL path: percent-encoded, `/` included.
    static func escape(_ subject: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("/")
        return subject.addingPercentEncoding(withAllowedCharacters: allowed) ?? subject
    }
}
