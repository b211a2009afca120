import Foundation
import HPKE
import MdocCBOR
import Testing

import AnnexC
import AnnexCReader
import DigitalCredentials
import OpenID4VPReader

/// The Swift snippets of the README and the guides in docs/, compiled and run here.
/// `readmeSnippetsAreHere` fails when a snippet is edited without this file (each ```swift block must appear verbatim between the
/// `README snippet` markers below), so the README never shows code that does not build.
@Suite("README: every Swift snippet compiles and runs")
struct ReadmeSnippetTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The published test context, copied into a private directory (a checkout does not keep modes,
    /// and the snippet loads with the default ownership and mode checks).
    static func privateTestContext() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: repo.appendingPathComponent("TestVectors/context"), to: dir)
        for path in try FileManager.default.subpathsOfDirectory(atPath: dir.path) {
            var isDirectory: ObjCBool = false
            let full = dir.appendingPathComponent(path).path
            _ = FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory)
            try FileManager.default.setAttributes(
                [.posixPermissions: isDirectory.boolValue ? 0o700 : 0o600], ofItemAtPath: full)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir.path)
        return dir
    }

    @Test("the Annex C snippet answers a request the reader side verifies, before and after consent")
    func annexCSnippet() throws {
        let contextDirectory = try Self.privateTestContext()
        defer { try? FileManager.default.removeItem(at: contextDirectory) }
        let origin = "https://verifier.example"
        let asked = [ElementID("org.iso.18013.5.1", "family_name"), ElementID("org.iso.18013.5.1", "age_over_18")]
        let built = try AnnexCReader.makeRequest(
            documents: [.init(docType: "org.iso.18013.5.1.mDL", elements: asked.map { .init($0) })],
            origin: try Origin(origin))
        let requestJSON = built.rawRequest
        let userChoice: Set<ElementID> = [asked[1]]

        // README snippet: begin
        // The host app's credential context (credentials as issued, device key references, the holder's
        // reader-trust policy). A long-lived engine over its directory sees every change the store makes
        // (a credential cancelled by another process is never presented); device keys are resolved
        // through a DeviceKeyResolver.
        let engine = try DigitalCredentialsEngine(contextDirectory: contextDirectory)

        // One call: the raw request (any framing) and the requesting origin in, the platform's bytes out.
        let response = try engine.accept(rawRequest: requestJSON, origin: "https://verifier.example")

        // Or two phases, with a consent screen in between.
        let request = try engine.parse(rawRequest: requestJSON, origin: origin)
        // show request.origin, and per document: who asks (readerVerdict), the elements with intentToRetain,
        // and the chosen candidate's releasable elements and substitutions (what would go out instead of a
        // missing element); request.signedByDifferentReaders when several readers signed parts of it
        let sealed = try engine.respond(
            to: request, approving: .elements(userChoice), consented: request.consentSummary())
        // README snippet: end

        let iaca = try Certificate(
            der: Array(Data(contentsOf: Self.repo.appendingPathComponent("TestVectors/pki/iaca.der"))))
        let all = try AnnexCReader.openResponse(response, for: built, issuerRoots: [iaca], at: Date())
        #expect(all.documents.map { Set($0.elements.map(\.element)) } == [Set(asked)])
        let chosen = try AnnexCReader.openResponse(sealed, for: built, issuerRoots: [iaca], at: Date())
        #expect(chosen.documents.map { $0.elements.map(\.element) } == [[asked[1]]])
    }

    @Test("the both-protocols snippet answers an OpenID4VP request the verifier side accepts")
    func bothProtocolsSnippet() throws {
        let contextDirectory = try Self.privateTestContext()
        defer { try? FileManager.default.removeItem(at: contextDirectory) }
        let context = try CredentialContext.load(from: contextDirectory)!
        let origin = "https://verifier.example"
        let asked = ElementID("org.iso.18013.5.1", "age_over_18")
        let built = try OpenID4VPReader.makeRequest(
            queries: [.init(id: "mdl", docType: "org.iso.18013.5.1.mDL", claims: [.init(asked)])],
            origin: try Origin(origin))
        let requestJSON = built.rawRequest
        let userChoice: Set<ElementID> = [asked]

        // README snippet: begin
        let engine = DigitalCredentialsEngine(context: context)  // Annex C and OpenID4VP over one context
        let answer = try engine.accept(rawRequest: requestJSON, origin: "https://verifier.example")
        // request.protocolIdentifier says which protocol the request is answered in
        let request = try engine.parse(rawRequest: requestJSON, origin: origin)
        let answered = try engine.respond(to: request, approving: .elements(userChoice))
        // README snippet: end

        let iaca = try Certificate(
            der: Array(Data(contentsOf: Self.repo.appendingPathComponent("TestVectors/pki/iaca.der"))))
        for response in [answer, answered] {
            let v = try OpenID4VPReader.openResponse(response, for: built, issuerRoots: [iaca], at: Date())
            #expect(v.documents(for: "mdl").first?.elements.map(\.element) == [asked])
        }
        #expect(request.protocolIdentifier == "openid4vp-v1-unsigned")
    }

    @Test("the HPKE snippet seals what the recipient opens")
    func hpkeSnippet() throws {
        let recipient = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256)
        let readerKey = recipient.publicKey
        let transcript: [UInt8] = Array("transcript".utf8)
        let response: [UInt8] = Array("response".utf8)
        let suite = HPKE.Ciphersuite(kem: .x25519HKDFSHA256, kdf: .hkdfSHA256, aead: .chaCha20Poly1305)
        let second = try HPKE.PrivateKey.generate(kem: suite.kem)
        let pkR = second.publicKey
        let info: [UInt8] = [1, 2, 3]
        let m0: [UInt8] = Array("m0".utf8)

        // README snippet: begin
        let (enc, ct) = try HPKE.seal(suite: .annexC, recipient: readerKey, info: transcript, plaintext: response)
        var sender = try HPKE.Sender(suite: suite, recipient: pkR, info: info)  // multi-message, not copyable
        let c0 = try sender.seal(m0)
        // README snippet: end

        #expect(
            try HPKE.open(
                suite: .annexC, privateKey: recipient, encapsulatedKey: enc, info: transcript, ciphertext: ct)
                == response)
        #expect(
            try HPKE.open(
                suite: suite, privateKey: second, encapsulatedKey: sender.encapsulatedKey, info: info, ciphertext: c0)
                == m0)
    }

    @Test(
        "every ```swift block of the README and the guides in docs/ appears verbatim between snippet markers in this file"
    )
    func readmeSnippetsAreHere() throws {
        let docs = Self.repo.appendingPathComponent("docs")
        let guides = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
        var text = try String(contentsOf: Self.repo.appendingPathComponent("README.md"), encoding: .utf8)
        for g in guides { text += "\n" + (try String(contentsOf: docs.appendingPathComponent(g), encoding: .utf8)) }
        // The blocks start with their imports, which live at the top of this file.
        let blocks = Self.blocks(text, open: "```swift", close: "```").map { block in
            Array(block.filter { !$0.hasPrefix("import ") }.drop(while: \.isEmpty))
        }
        #expect(blocks.count >= 2)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let regions = Self.blocks(source, open: "// README snippet: begin", close: "// README snippet: end")
        for block in blocks {
            #expect(regions.contains(block), "README snippet not compiled here:\n\(block.joined(separator: "\n"))")
        }
    }

    /// The lines between each `open` line and the next `close` line, trimmed of surrounding spaces.
    static func blocks(_ text: String, open: String, close: String) -> [[String]] {
        var out = [[String]]()
        var current: [String]?
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if current == nil {
                if line == open { current = [] }
            } else if line == close {
                out.append(current!)
                current = nil
            } else {
                current!.append(line)
            }
        }
        return out
    }
}
