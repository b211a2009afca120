import DigitalCredentials
import Foundation
import MdocCBOR
import OpenID4VPReader
import Presentment
import Testing
import TestSupport
import TestWorld

@testable import OpenID4VP

@Suite("OpenID4VP: hostile requests are refused with their code and rule, and no bytes")
struct HostileRequestTests {
    @Test("Every catalogue row is refused by accept and by parse with its exact code and the rule that refuses it")
    func catalogue() throws {
        let world = try TestWorld()
        try Self.runCatalogue(world, try world.context([try world.entry(id: "mdl")], trust: world.trusted))
    }

    @Test(
        "Every catalogue row is refused the same way when the device key lives in a SoftHSM2 token",
        .enabled(if: TokenContext.runnable, TokenContext.skipNote))
    func catalogueWithTokenKeys() throws {
        let world = try TestWorld()
        try Self.runCatalogue(world, try world.tokenContext([try world.entry(id: "mdl")], trust: world.trusted))
    }

    /// Runs every row through accept and parse of an engine over `context`.
    static func runCatalogue(_ world: TestWorld, _ context: CredentialContext) throws {
        let engine = TestWorld.engine(context, protocols: [.openID4VP]) { $0.clock = { TestWorld.now } }
        let rows = try OpenID4VPCatalogue.rows(world: world)
        #expect(rows.count >= 50)
        defer { print("OpenID4VP catalogue: \(rows.count) hostile requests, each refused by accept and by parse") }
        for row in rows {
            for path in ["accept", "parse"] {
                do {
                    if path == "accept" {
                        let out = try engine.accept(rawRequest: row.raw, origin: row.origin)
                        Issue.record("\(row.name) (\(path)): answered with \(out.count) bytes")
                    } else {
                        _ = try engine.parse(rawRequest: row.raw, origin: row.origin)
                        Issue.record("\(row.name) (\(path)): parsed")
                    }
                } catch {
                    #expect(
                        row.expected.mismatch(error) == nil,
                        "\(row.name) (\(path)): \(row.expected.mismatch(error) ?? "")")
                    // Refusals never echo the origin or request content.
                    #expect(!error.detail.contains("verifier.example"), "\(row.name): \(error.detail)")
                }
            }
        }
    }

    @Test("The holder's policy: untrusted or unsigned verifiers refused when it requires trust or authentication")
    func policy() throws {
        let world = try TestWorld()
        let entry = try world.entry(id: "mdl")
        func engine(_ trust: ReaderTrustPolicy) throws -> DigitalCredentialsEngine {
            TestWorld.engine(try world.context([entry], trust: trust), protocols: [.openID4VP])
        }
        let query = OpenID4VPEndToEndTests.familyAndAge
        let unsigned = try OpenID4VPReader.makeRequest(queries: [query], origin: TestWorld.origin)
        let selfSignedKey = try SoftwareSigner.generate()
        let selfSigned = try Certificate.issue(
            subject: .init(commonName: "Self"), publicKey: selfSignedKey.publicKey, issuer: nil,
            issuerKey: selfSignedKey,
            serial: 5, notBefore: TestWorld.now.addingTimeInterval(-86400),
            notAfter: TestWorld.now.addingTimeInterval(86400),
            profile: .requestSigner(dnsNames: ["verifier.example"]))
        let rogue = try OpenID4VPReader.makeRequest(
            queries: [query], origin: TestWorld.origin,
            signing: .signed(.init(key: selfSignedKey, chain: [selfSigned], clientID: .sanDNS("verifier.example"))))
        // Default policy: answered, with the verdict shown.
        let lenient = try engine(world.trusted)
        let parsed = try lenient.parse(rawRequest: rogue.rawRequest, origin: TestWorld.origin.serialized)
        #expect(parsed.readerVerdict == .signedNotTrusted(subject: selfSigned.subject, reason: .selfSigned))
        _ = try lenient.accept(rawRequest: unsigned.rawRequest, origin: TestWorld.origin.serialized)
        // requireTrustedReader: the self-signed verifier is refused, the unsigned request answered.
        var strict = world.trusted
        strict.requireTrustedReader = true
        expectRefusal(.untrustedReader) {
            try engine(strict).accept(rawRequest: rogue.rawRequest, origin: TestWorld.origin.serialized)
        }
        _ = try engine(strict).accept(rawRequest: unsigned.rawRequest, origin: TestWorld.origin.serialized)
        // requireReaderAuthentication: the unsigned request is refused too.
        var required = world.trusted
        required.requireReaderAuthentication = true
        expectRefusal(TrustRule.signatureRequired) {
            try engine(required).accept(rawRequest: unsigned.rawRequest, origin: TestWorld.origin.serialized)
        }
        // Allowed authorities by AKI: the verifier's issuing CA must be listed.
        let other = ReaderTrustPolicy(trustAnchors: [world.readerRoot], authorities: .only([[1, 2, 3]]))
        let signed = try OpenID4VPReader.makeRequest(
            queries: [query], origin: TestWorld.origin,
            signing: .signed(.init(key: world.verifierKey, chain: [world.verifierCert], clientID: .hash)))
        expectRefusal(.untrustedReader) {
            try engine(other).accept(rawRequest: signed.rawRequest, origin: TestWorld.origin.serialized)
        }
        let allowed = ReaderTrustPolicy(
            trustAnchors: [world.readerRoot], authorities: .only([world.readerRoot.subjectKeyIdentifier!]))
        _ = try engine(allowed).accept(rawRequest: signed.rawRequest, origin: TestWorld.origin.serialized)
    }

    @Test("The protocol error object for each refusal family, never produced automatically")
    func errorObjects() {
        let cases: [(PresentmentError, String)] = [
            (PresentmentError(OpenID4VPRule.responseType), "invalid_request"),
            (PresentmentError(OpenID4VPRule.originNotExpected), "invalid_request"),
            (PresentmentError(OpenID4VPRule.prefixUnsupported), "invalid_request"),
            (PresentmentError(OpenID4VPRule.signatureInvalid), "invalid_request"),
            (PresentmentError(SelectionRule.noUsableCredential), "access_denied"),
            (PresentmentError(SelectionRule.nothingReleasable), "access_denied"),
            (PresentmentError(OpenID4VPRule.transactionData), "invalid_transaction_data"),
            (PresentmentError(KeyRule.signingFailed), "server_error"),
        ]
        for (error, expected) in cases {
            let data = OpenID4VPError.object(for: error)
            #expect(String(decoding: data, as: UTF8.self) == "{\"error\":\"\(expected)\"}")
        }
    }
}
