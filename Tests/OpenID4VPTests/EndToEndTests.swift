import CryptoCore
import DigitalCredentials
import Foundation
import JOSE
import MdocCBOR
import OpenID4VPReader
import Presentment
import Testing
import TestSupport
import TestWorld
import WebEncoding

@testable import OpenID4VP

@Suite("OpenID4VP: end to end through accept, parse/respond and the verifier side")
struct OpenID4VPEndToEndTests {
    static let ns = TestWorld.mDLNS

    static func engine(_ world: TestWorld, trust: ReaderTrustPolicy? = nil, entries: [CredentialContext.Entry]? = nil)
        throws -> DigitalCredentialsEngine
    {
        let context = try world.context(try entries ?? [world.entry(id: "mdl")], trust: trust ?? world.trusted)
        return TestWorld.engine(context, protocols: [.openID4VP]) { $0.clock = { TestWorld.now } }
    }

    static let familyAndAge = OpenID4VPReader.CredentialQuery(
        id: "mdl", docType: TestWorld.mDL,
        claims: [.init(ElementID(ns, "family_name")), .init(ElementID(ns, "age_over_18"), intentToRetain: false)])

    enum Form: String, CaseIterable, Sendable {
        case unsigned, signedSanDNS, signedHash, multiTopLevel, multiRequestObject, multiRequestString
    }

    struct Combo: CustomTestStringConvertible, Sendable {
        let form: Form
        let mode: OpenID4VPResponseMode
        let framing: OpenID4VPReader.Framing
        var testDescription: String { "\(form.rawValue) \(mode.rawValue) \(framing.rawValue)" }
    }

    static var combos: [Combo] {
        Form.allCases.flatMap { f in
            OpenID4VPResponseMode.allCases.flatMap { m in
                OpenID4VPReader.Framing.allCases.map { Combo(form: f, mode: m, framing: $0) }
            }
        }
    }

    static func signing(_ form: Form, _ world: TestWorld) -> OpenID4VPReader.Signing {
        let dns = OpenID4VPReader.Signer(
            key: world.verifierKey, chain: [world.verifierCert], clientID: .sanDNS("verifier.example"))
        let hash = OpenID4VPReader.Signer(key: world.verifierKey, chain: [world.verifierCert], clientID: .hash)
        switch form {
        case .unsigned: return .unsigned
        case .signedSanDNS: return .signed(dns)
        case .signedHash: return .signed(hash)
        case .multiTopLevel: return .multisigned([dns, hash], placement: .topLevel)
        case .multiRequestObject: return .multisigned([hash, dns], placement: .requestObject)
        case .multiRequestString: return .multisigned([dns], placement: .requestString)
        }
    }

    @Test(
        "Every request form, response mode and framing is answered, and the verifier side accepts the answer",
        arguments: combos)
    func matrix(_ c: Combo) throws {
        let world = try TestWorld()
        let engine = try Self.engine(world)
        let request = try OpenID4VPReader.makeRequest(
            queries: [Self.familyAndAge], origin: TestWorld.origin, signing: Self.signing(c.form, world),
            framing: c.framing, responseMode: c.mode)
        let response = try engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        let verified = try OpenID4VPReader.openResponse(
            response, for: request, issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(
            verified.documents(for: "mdl").first?.elements.map(\.element.identifier) == ["family_name", "age_over_18"])
        // The list framings answer in {protocol, data}; the others with the data object.
        let outer = try JSONSerialization.jsonObject(with: response) as? [String: Any]
        let wrapped = c.framing == .requestList || c.framing == .digitalRequestList
        #expect((outer?["protocol"] as? String == request.protocolIdentifier) == wrapped)
        // The two-phase path gives the same answer and the consent model says who asks.
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        #expect(parsed.protocolIdentifier == request.protocolIdentifier)
        #expect(parsed.documents.map(\.docType) == [TestWorld.mDL])
        #expect(parsed.documents[0].elements.map(\.id.identifier) == ["family_name", "age_over_18"])
        let details = try #require(parsed.details.openID4VP)
        #expect(details.nonce == request.nonce && details.responseMode == c.mode)
        #expect(details.encryption?.thumbprint == request.thumbprint)
        if c.form == .unsigned {
            #expect(parsed.readerVerdict == .notAuthenticated && parsed.signatures.isEmpty)
        } else {
            guard case .trusted = parsed.readerVerdict else {
                Issue.record("a signed request from the test verifier is not trusted: \(parsed.readerVerdict)")
                return
            }
            #expect(parsed.signatures.allSatisfy { $0.clientID?.hasPrefix("x509_") == true })
        }
        let answered = try engine.respond(to: parsed, consented: parsed.consentSummary())
        _ = try OpenID4VPReader.openResponse(answered, for: request, issuerRoots: [world.iaca], at: TestWorld.now)
    }

    @Test(
        "explain's trace holds the handover info built from the request (origin, nonce, the key's thumbprint), the handover carrying its SHA-256, and the SessionTranscript the answer signs (both modes)",
        arguments: OpenID4VPResponseMode.allCases)
    func traceStructures(_ mode: OpenID4VPResponseMode) throws {
        let world = try TestWorld()
        let engine = try Self.engine(world)
        let request = try OpenID4VPReader.makeRequest(
            queries: [Self.familyAndAge], origin: TestWorld.origin, signing: .unsigned, framing: .dataObject,
            responseMode: mode)
        let trace = engine.explain(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized).trace
        let info = try #require(trace.structure("OpenID4VPDCAPIHandoverInfo"))
        let handover = try #require(trace.structure("OpenID4VPDCAPIHandover"))
        let transcript = try #require(trace.structure("SessionTranscript"))
        let thumbprint = mode == .dcAPIJWT ? request.thumbprint : nil
        #expect(
            info
                == OpenID4VPHandover.handoverInfo(
                    origin: TestWorld.origin.serialized, nonce: request.nonce, jwkThumbprint: thumbprint))
        #expect(Array(handover.suffix(32)) == DigestAlgorithm.sha256.hash(info))
        #expect(transcript == [0x83, 0xf6, 0xf6] + handover)
        #expect(
            transcript
                == OpenID4VPHandover(
                    origin: TestWorld.origin.serialized, nonce: request.nonce, jwkThumbprint: thumbprint
                )
                .sessionTranscript)
    }

    @Test(
        "The OpenID4VPDCAPIHandover, its info and the SessionTranscript match the published example (both modes)",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func handoverVector() throws {
        let v = try #require(try SharedVectors.json("openid4vp/dcapi-session-transcript.json") as? [String: Any])
        let origin = try #require(v["origin"] as? String)
        let nonce = try #require(v["nonce"] as? String)
        let thumbprint = try Hex.decode(try #require(v["jwkThumbprintSha256Hex"] as? String))
        let jwt = OpenID4VPHandover(origin: origin, nonce: nonce, jwkThumbprint: thumbprint)
        #expect(
            Hex.encode(OpenID4VPHandover.handoverInfo(origin: origin, nonce: nonce, jwkThumbprint: thumbprint))
                == v["handoverInfoCborHex"] as? String)
        #expect(Hex.encode(jwt.handover) == v["handoverCborHex"] as? String)
        #expect(Hex.encode(jwt.sessionTranscript) == v["sessionTranscriptCborHex"] as? String)
        // From the verifier's JWK itself (the engine's path).
        let document = try JSONValue.parse(Array(try SharedVectors.data("openid4vp/dcapi-session-transcript.json")))
        let key = try JWK(try #require(document["verifierEncryptionJwk"]))
        #expect(OpenID4VPHandover(origin: origin, nonce: nonce, responseKey: key) == jwt)
        #expect(
            OpenID4VPHandover(origin: origin, nonce: nonce, responseKey: nil).sessionTranscript
                == OpenID4VPHandover(origin: origin, nonce: nonce, jwkThumbprint: nil).sessionTranscript)
        let plain = try #require(v["responseModeDcApi"] as? [String: Any])
        let dcAPI = OpenID4VPHandover(origin: origin, nonce: nonce, jwkThumbprint: nil)
        #expect(
            Hex.encode(OpenID4VPHandover.handoverInfo(origin: origin, nonce: nonce, jwkThumbprint: nil))
                == plain["handoverInfoCborHex"] as? String)
        #expect(Hex.encode(dcAPI.sessionTranscript) == plain["sessionTranscriptCborHex"] as? String)
    }
}
