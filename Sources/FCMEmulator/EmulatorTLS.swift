import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate authority and a server certificate for `localhost`/`127.0.0.1`, made in
/// memory, so the emulator serves real TLS with nothing installed. Clients trust ``caPEM``.
public struct EmulatorTLS: Sendable {
    public var caPEM: String
    public var certificatePEM: String
    public var privateKeyPEM: String

    public init(caPEM: String, certificatePEM: String, privateKeyPEM: String) {
        self.caPEM = caPEM
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }

    /// A fresh CA (valid for a day) and a server certificate it signed.
    public static func generate(hosts: [String] = ["localhost"], ipAddresses: [[UInt8]] = [[127, 0, 0, 1]]) throws -> EmulatorTLS {
        let now = Date()
        let caKey = P256.Signing.PrivateKey()
        // A name of its own: a client given another emulator's CA must not mistake it for this one.
        let caName = try DistinguishedName { CommonName("pushbridge FCM emulator CA \(UInt32.random(in: .min ... .max))") }
        let ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: now - 300, notValidAfter: now + 86_400, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(caKey))
        let serverKey = P256.Signing.PrivateKey()
        let names: [GeneralName] = hosts.map { .dnsName($0) } + ipAddresses.map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) }
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now - 300, notValidAfter: now + 86_400, issuer: caName,
            subject: try DistinguishedName { CommonName(hosts.first ?? "localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            },
            issuerPrivateKey: .init(caKey))
        return EmulatorTLS(
            caPEM: try ca.serializeAsPEM().pemString, certificatePEM: try server.serializeAsPEM().pemString,
            privateKeyPEM: serverKey.pemRepresentation)
    }
}
