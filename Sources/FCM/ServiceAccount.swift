import Foundation
import JSON

/// A Google service-account key file: what FCM's OAuth2 needs.
///
/// - Important: ``privateKeyPEM`` is a secret: it never appears in `description`, logs or errors.
public struct ServiceAccount: Sendable, CustomStringConvertible {
    public var projectID: String
    public var clientEmail: String
    public var privateKeyPEM: String
    public var privateKeyID: String?
    /// Where the signed JWT is exchanged for an access token. Honoured as given, so tests and the
    /// demo can point it at the FCM emulator.
    public var tokenURI: String

    public init(
        projectID: String, clientEmail: String, privateKeyPEM: String, privateKeyID: String? = nil,
        tokenURI: String = "https://oauth2.googleapis.com/token"
    ) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyPEM = privateKeyPEM
        self.privateKeyID = privateKeyID
        self.tokenURI = tokenURI
    }

    /// Parses the JSON key file.
    /// - Throws: ``FCMConfigurationError`` naming the missing or invalid field (never its value).
    public init(json: Data, source: String = "service account") throws(FCMConfigurationError) {
        guard let object = try? JSONParser.parse([UInt8](json)), case .object = object else {
            throw FCMConfigurationError("\(source): not a JSON object")
        }
        func field(_ name: String) throws(FCMConfigurationError) -> String {
            guard let value = object[name]?.stringValue, !value.isEmpty else {
                throw FCMConfigurationError("\(source): missing \"\(name)\"")
            }
            return value
        }
        if let type = object["type"]?.stringValue, type != "service_account" {
            throw FCMConfigurationError("\(source): \"type\" is \"\(type)\", expected \"service_account\"")
        }
        self.init(
            projectID: try field("project_id"),
            clientEmail: try field("client_email"),
            privateKeyPEM: try field("private_key"),
            privateKeyID: object["private_key_id"]?.stringValue,
            tokenURI: object["token_uri"]?.stringValue ?? "https://oauth2.googleapis.com/token"
        )
    }

    /// Loads a key file from `path`, or from `GOOGLE_APPLICATION_CREDENTIALS` when `path` is nil.
    public static func load(
        path: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(FCMConfigurationError) -> ServiceAccount {
        guard let file = path ?? environment["GOOGLE_APPLICATION_CREDENTIALS"] else {
            throw FCMConfigurationError("no service account: give a key file, or set GOOGLE_APPLICATION_CREDENTIALS")
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw FCMConfigurationError("cannot read service account file \(file)")
        }
        return try ServiceAccount(json: data, source: file)
    }

    public var description: String {
        "ServiceAccount(project: \(projectID), email: \(clientEmail), token_uri: \(tokenURI), key: <redacted>)"
    }
}

/// A problem with FCM credentials or settings, found before anything is sent.
public struct FCMConfigurationError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
