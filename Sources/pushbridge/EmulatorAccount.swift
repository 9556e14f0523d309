import FCM
import FCMEmulator
import Foundation
import _CryptoExtras

/// A fresh service account for the FCM emulator: an RSA key the emulator trusts, and the key file
/// a worker loads (its `token_uri` points at the emulator).
struct EmulatorAccount {
    let email: String
    let projectID: String
    let privateKeyPEM: String

    init(projectID: String = "demo-project", name: String = "pushbridge") throws {
        self.projectID = projectID
        self.email = "\(name)@\(projectID).iam.gserviceaccount.com"
        self.privateKeyPEM = try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
    }

    func serviceAccount(tokenURI: String) -> ServiceAccount {
        ServiceAccount(projectID: projectID, clientEmail: email, privateKeyPEM: privateKeyPEM, tokenURI: tokenURI)
    }

    /// Writes the Google key-file JSON (mode 0600: it holds a private key).
    func writeKeyFile(to path: String, tokenURI: String) throws {
        let json: [String: String] = [
            "type": "service_account", "project_id": projectID, "private_key_id": "emulator",
            "private_key": privateKeyPEM, "client_email": email, "token_uri": tokenURI,
        ]
        let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
        FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600])
    }
}
