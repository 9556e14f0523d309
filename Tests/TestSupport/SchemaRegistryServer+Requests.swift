import Foundation
import ProcessHarness

extension SchemaRegistryServer {
    /// Which credentials a request carries.
    public enum Auth: Sendable {
        /// The server's own (``credentials``), if it has any.
        case server
        case none
        case basic(Credentials)
    }

    /// Which CA a request trusts over HTTPS.
    public enum Trust: Sendable {
        /// The server's (``caFile``).
        case serverCA
        /// The system's roots only, which never signed a test certificate.
        case systemRoots
    }

    /// An answer: status, `Content-Type`, `WWW-Authenticate` and body.
    public struct Response: Sendable, Decodable {
        public var status: Int
        public var contentType: String?
        public var wwwAuthenticate: String?
        public var body: String

        enum CodingKeys: String, CodingKey {
            case status, body
            case contentType = "content_type"
            case wwwAuthenticate = "www_authenticate"
        }

        /// The body as a JSON object (nil if it is not one).
        public var object: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
        }

        /// The body as JSON of any kind (nil if it is not JSON).
        public var json: Any? { try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed]) }

        /// Confluent's error code (`error_code`), for error answers.
        public var errorCode: Int? { object?["error_code"] as? Int }
    }

    /// A request that got no answer (connection refused, TLS verification failed).
    public struct NoAnswer: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends one request with Python's urllib (`Resources/registry_request.py`), which speaks
    /// HTTPS with a CA file and Basic credentials, unlike the tests' plain loopback client.
    /// `path` includes the query; subjects in it are percent-encoded by the caller.
    /// - Throws: ``NoAnswer`` when no HTTP answer came.
    public func request(
        _ method: String = "GET", _ path: String, body: String? = nil, auth: Auth = .server, trust: Trust = .serverCA
    ) async throws -> Response {
        var arguments = ["-B", Self.resources + "/registry_request.py", method, url + path]
        if let body { arguments += ["--data", body] }
        if case .serverCA = trust, let caFile { arguments += ["--ca", caFile] }
        let sent: Credentials? =
            switch auth {
            case .server: credentials
            case .none: nil
            case .basic(let given): given
            }
        if let sent { arguments += ["--user", sent.user, "--password", sent.password] }
        let (status, output) = try await ChildProcess.run(Self.python, arguments, timeout: .seconds(60))
        guard status == 0 else { throw NoAnswer(description: output.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }) else {
            throw TestSupportError("registry_request.py printed no answer: \(output)")
        }
        return try JSONDecoder().decode(Response.self, from: Data(line.utf8))
    }

    /// `subject` percent-encoded as one path segment (a Protobuf reference's subject is a file
    /// path, and its slashes must not split the URL), as Confluent's clients send it.
    public static func encode(subject: String) -> String {
        subject.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? subject
    }
}
