import Foundation
import JSON
import _CryptoExtras

/// A fresh service account for the emulator: an RSA key it can trust
/// (`Configuration(accounts: [account.email: account.privateKeyPEM])`) and the Google key file a
/// client loads, whose `token_uri` points at the emulator.
public struct EmulatorAccount: Sendable {
    public let projectID: String
    public let email: String
    /// A secret, as in a real key file.
    public let privateKeyPEM: String

    public init(projectID: String = "demo-project", name: String = "pushbridge") throws {
        self.projectID = projectID
        self.email = "\(name)@\(projectID).iam.gserviceaccount.com"
        self.privateKeyPEM = try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
    }

    /// The key file's JSON: `type`, `project_id`, `private_key_id`, `private_key`,
    /// `client_email`, `token_uri`.
    public func keyFileJSON(tokenURI: String) -> [UInt8] {
        JSONWriter.write(
            .object([
                ("client_email", .string(email)), ("private_key", .string(privateKeyPEM)), ("private_key_id", .string("emulator")),
                ("project_id", .string(projectID)), ("token_uri", .string(tokenURI)), ("type", .string("service_account")),
            ]), pretty: true)
    }

    /// Writes ``keyFileJSON(tokenURI:)`` with mode 0600: it holds a private key.
    public func writeKeyFile(to path: String, tokenURI: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(keyFileJSON(tokenURI: tokenURI)), attributes: [.posixPermissions: 0o600])
        else {
            throw EmulatorError("cannot write \(path)")
        }
    }
}
