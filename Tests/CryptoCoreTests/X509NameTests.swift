import Foundation
import Testing

@testable import CryptoCore

@Suite("X.509: subjectAltName dNSNames")
struct X509NameTests {
    static func issue(san: String?) throws -> X509Certificate {
        let key = try PrivateKey.generate(.ec(.p256))
        return try X509Builder.issue(
            subject: [("CN", "Verifier")], subjectKey: key.publicKey, issuer: nil, issuerKey: key, serial: 7,
            notBefore: 1_700_000_000, notAfter: 1_900_000_000,
            profile: .init(isCA: false, keyUsage: "critical,digitalSignature", subjectAlternativeName: san))
    }

    @Test("dNSName entries are read in order; other name kinds are skipped; no extension reads as none")
    func dnsNames() throws {
        #expect(
            try Self.issue(san: "DNS:verifier.example,DNS:www.verifier.example").dnsNames
                == ["verifier.example", "www.verifier.example"])
        #expect(
            try Self.issue(san: "URI:https://verifier.example,DNS:a.example,email:x@y.example").dnsNames
                == ["a.example"])
        #expect(try Self.issue(san: nil).dnsNames.isEmpty)
        // The subject's CN is never a dNSName.
        #expect(try Self.issue(san: "URI:https://verifier.example").dnsNames.isEmpty)
        // Re-read from DER: the names survive encoding.
        let c = try Self.issue(san: "DNS:verifier.example")
        #expect(try X509Certificate(der: c.der).dnsNames == ["verifier.example"])
    }
}
