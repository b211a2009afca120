import CMdocRespondABI
import DigitalCredentials
import Foundation
import MdocCBOR
import MdocRespondC
import Presentment
import Testing

/// The C ABI from Swift: the fixed status numbering, the configuration and approval readers, and the
/// handle registry under concurrent use (this suite also runs under ThreadSanitizer). The C program
/// `Tests/CABI/abi_test.c` drives the same entry points from C under ASan.
@Suite("C ABI: numbering, settings, handles")
struct ABITests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("TestVectors")

    @Test(
        "One version: the library's mdoc_version, the Swift API's (the CLI's --version) and the Python package's are the repository's VERSION file"
    )
    func oneVersion() throws {
        let root = Self.vectors.deletingLastPathComponent()
        let version = try String(contentsOf: root.appendingPathComponent("VERSION"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(String(cString: mdocVersion()) == version)
        let pyproject = try String(contentsOf: root.appendingPathComponent("python/pyproject.toml"), encoding: .utf8)
        #expect(pyproject.contains("version = \"\(version)\""))
        let binding = try String(
            contentsOf: root.appendingPathComponent("python/mdoc_respond/__init__.py"), encoding: .utf8)
        #expect(binding.contains("__version__ = \"\(version)\""))
        #expect(DigitalCredentialsEngine.version == version)
    }

    @Test("Every Swift error code has its own number 1-31 and its own name; misuse codes are 100-103")
    func numbering() {
        let numbers = PresentmentError.Code.allCases.map(ABIStatus.number)
        #expect(Set(numbers).count == PresentmentError.Code.allCases.count)
        #expect(Set(numbers) == Set(1...Int32(PresentmentError.Code.allCases.count)))
        for c in PresentmentError.Code.allCases { #expect(ABIStatus.names[ABIStatus.number(c)] == c.rawValue) }
        #expect(ABIStatus.names[MDOC_OK] == "ok")
        #expect(
            [
                MDOC_ERR_INVALID_ARGUMENT, MDOC_ERR_INVALID_HANDLE, MDOC_ERR_INVALID_CONFIGURATION,
                MDOC_ERR_INVALID_APPROVAL,
            ]
                == [100, 101, 102, 103])
        #expect(String(cString: mdocStatusName(MDOC_ERR_KEY_UNAVAILABLE)) == "keyUnavailable")
        #expect(String(cString: mdocStatusName(77)) == "unknown")
    }

    @Test(
        "Configuration JSON: each knob lands in the engine configuration",
        arguments: [
            (#"{"protocol":"openID4VP"}"#, "preference openID4VP"),
            (#"{"missingElements":"report"}"#, "report"),
            (#"{"selfCheck":true}"#, "selfCheck"),
            (#"{"allowAppOrigins":true}"#, "allowAppOrigins"),
            (#"{"preferA256GCM":false}"#, "A128GCM"),
            (#"{"limits":{"maxRequestBytes":1000,"maxDocRequests":3,"maxCredentialQueries":4}}"#, "limits"),
            (#"{"trust":{"authorities":["0A0b"],"requireTrustedReader":true}}"#, "trust"),
            (#"{"testing":true,"clock":"2030-01-02T03:04:05Z"}"#, "clock"),
        ])
    func settings(json: String, what: String) throws {
        let d = try ABISettings(json: Array(json.utf8)).document
        let c = d.configuration
        switch what {
        case "preference openID4VP": #expect(c.preference == .openID4VP)
        case "report": #expect(c.annexC.missingElements == .report)
        case "selfCheck": #expect(c.selfCheck)
        case "allowAppOrigins": #expect(c.allowAppOrigins)
        case "A128GCM": #expect(!c.openID4VP.preferA256GCM)
        case "limits":
            // maxDocRequests and maxCredentialQueries are older names of the one maxDocuments: the last wins.
            #expect(c.limits.maxRequestBytes == 1000 && c.limits.maxDocuments == 4)
        case "trust": #expect(d.authorities == [[0x0a, 0x0b]] && d.requireTrustedReader == true && d.anchors == nil)
        default: #expect(c.clock().timeIntervalSince1970 == 1_893_553_445)
        }
    }

    @Test(
        "Approval JSON: all, elements, per document, using, consented",
        arguments: [
            #"{"approve":"all"}"#, #"{"approve":["a.b/c","d.e/f"]}"#,
            #"{"approve":{"1":["a.b/c"]},"using":{"1":"mdl"}}"#,
            #"{"consented":{"org.iso.18013.5.1.mDL":["a.b/c"]}}"#,
        ])
    func approvals(json: String) throws {
        let a = try ABIApproval(json: Array(json.utf8))
        if json.contains("\"all\"") { #expect(a.approval == .allRequested) }
        if json.contains("d.e/f") { #expect(a.approval == .elements([ElementID("a.b", "c"), ElementID("d.e", "f")])) }
        if json.contains("using") {
            #expect(a.approval == .perDocument([1: [ElementID("a.b", "c")]]) && a.using == [1: "mdl"])
        }
        if json.contains("consented") {
            #expect(a.consented == ConsentedRequest(documents: ["org.iso.18013.5.1.mDL": [ElementID("a.b", "c")]]))
            #expect(a.approval == .allRequested)
        }
    }

    @Test("Approval JSON: approve nothing, and document-level consent with an empty list")
    func documentLevelApprovals() throws {
        #expect(try ABIApproval(json: Array(#"{"approve":[]}"#.utf8)).approval == .elements([]))
        #expect(try ABIApproval(json: Array(#"{"approve":{}}"#.utf8)).approval == .perDocument([:]))
        #expect(
            try ABIApproval(json: Array(#"{"approve":{"0":["a.b/c"],"1":[]}}"#.utf8)).approval
                == .perDocument([0: [ElementID("a.b", "c")], 1: []]))
    }

    @Test("Trust configuration narrows the stored policy; an empty allow-list or a widening member is refused")
    func trustNarrowsOnly() throws {
        let bytes = try [UInt8](Data(contentsOf: Self.vectors.appendingPathComponent("context/context.cbor")))
        let stored = try CredentialContext(encoded: bytes, keyResolver: InMemoryKeyResolver([:]))
        let storedAnchors = stored.readerTrust.trustAnchors
        try #require(!storedAnchors.isEmpty)
        func settings(_ json: String) throws(ABIFailure) -> ConfigurationDocument {
            try ABISettings(json: Array(json.utf8)).document
        }
        // The reported widening: an empty list would have meant "any authority".
        #expect(throws: ABIFailure.self) { try settings(#"{"trust":{"authorities":[]}}"#) }
        do {
            _ = try settings(#"{"trust":{"authorities":[]}}"#)
        } catch { #expect(error.code == MDOC_ERR_INVALID_CONFIGURATION) }
        // Narrowing: a requirement turned on, an allow-list where the stored policy allows any.
        let narrowed = try #require(
            try settings(#"{"trust":{"requireTrustedReader":true,"authorities":["0a0b"]}}"#)
                .configuration(over: stored).readerTrustInForce(over: stored))
        #expect(narrowed.requireTrustedReader && narrowed.authorities == .only([[0x0a, 0x0b]]))
        // Widening: a new anchor, a requirement turned off, another signer profile, or an authority
        // outside a stored allow-list; each passes only with replacePolicy.
        let foreign = try Certificate(
            der: [UInt8](Data(contentsOf: Self.vectors.appendingPathComponent("pki/unknown-reader-root.der"))))
        let anchorJSON = #"{"trust":{"anchors":[""# + Data(foreign.der).base64EncodedString() + #""]}}"#
        let strict = try CredentialContext(
            entries: stored.entries,
            readerTrust: ReaderTrustPolicy(
                trustAnchors: storedAnchors, authorities: .only([[1, 2]]), requireReaderAuthentication: true,
                requireTrustedReader: true),
            keyResolver: InMemoryKeyResolver([:]), validatingKeys: false)
        for json in [
            anchorJSON, #"{"trust":{"requireReaderAuthentication":false}}"#,
            #"{"trust":{"requireTrustedReader":false}}"#, #"{"trust":{"signerProfile":"requestSigner"}}"#,
            #"{"trust":{"authorities":["0304"]}}"#,
        ] {
            let s = try settings(json)
            #expect(throws: ConfigurationError.self, "\(json)") { try s.configuration(over: strict) }
            var replacing = try settings(json)
            replacing.replacePolicy = true
            _ = try replacing.configuration(over: strict)
            let explicit = try settings(String(json.dropLast(2)) + #","replacePolicy":true}}"#)
            #expect(explicit.replacePolicy)
            _ = try explicit.configuration(over: strict)
        }
        // A stored anchor kept, or a subset of the stored allow-list: narrowing, accepted.
        let keep =
            #"{"trust":{"anchors":[""# + Data(storedAnchors[0].der).base64EncodedString()
            + #""],"authorities":["0102"]}}"#
        _ = try settings(keep).configuration(over: strict)
    }

    @Test("Four threads parse, read, answer and release on one engine while another releases engines")
    func registryUnderThreads() throws {
        let fm = FileManager.default
        let dir = fm.temporaryDirectory.appendingPathComponent("mdoc-abi-tests-\(getpid())-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: dir) }
        try fm.copyItem(at: Self.vectors.appendingPathComponent("context"), to: dir)
        for name in try fm.subpathsOfDirectory(atPath: dir.path) {
            var isDir: ObjCBool = false
            _ = fm.fileExists(atPath: dir.appendingPathComponent(name).path, isDirectory: &isDir)
            chmod(dir.appendingPathComponent(name).path, isDir.boolValue ? 0o700 : 0o600)
        }
        chmod(dir.path, 0o700)
        let request = try [UInt8](
            Data(contentsOf: Self.vectors.appendingPathComponent("requests/mdl-dataObject-v1.0-none.json")))
        var engine: OpaquePointer?
        var error = mdoc_error()
        try #require(
            mdocEngineOpen(dir.path, #"{"testing":true,"clock":"2027-03-01T12:00:00Z"}"#, &engine, &error) == MDOC_OK)
        let shared = UInt(bitPattern: engine)
        let before = Handles.liveCounts
        let failures = LockedCounter()
        DispatchQueue.concurrentPerform(iterations: 5) { k in
            let engine = OpaquePointer(bitPattern: shared)
            var error = mdoc_error()
            for _ in 0..<(k == 4 ? 40 : 25) {
                if k == 4 {
                    // Engines opened and released beside the others' calls.
                    var other: OpaquePointer?
                    if mdocEngineOpen(dir.path, nil, &other, &error) != MDOC_OK || mdocEngineRelease(other) != MDOC_OK
                        || mdocEngineRelease(other) != MDOC_ERR_INVALID_HANDLE
                    {
                        failures.add()
                    }
                    continue
                }
                var parsed: OpaquePointer?
                guard mdocParse(engine, request, request.count, "https://verifier.example", &parsed, &error) == MDOC_OK
                else {
                    failures.add()
                    continue
                }
                var json: UnsafeMutablePointer<CChar>?
                var n = 0
                var out: UnsafeMutablePointer<UInt8>?
                if mdocRequestConsentJSON(parsed, &json, &n, &error) != MDOC_OK
                    || mdocRespond(parsed, #"{"approve":["org.iso.18013.5.1/family_name"]}"#, &out, &n, &error)
                        != MDOC_OK
                    || mdocRequestRelease(parsed) != MDOC_OK || mdocRequestRelease(parsed) != MDOC_ERR_INVALID_HANDLE
                {
                    failures.add()
                }
                mdocFree(json)
                mdocFree(out)
            }
        }
        #expect(failures.value == 0)
        #expect(Handles.liveCounts == before)
        #expect(mdocEngineRelease(engine) == MDOC_OK)
    }
}

/// A counter several threads add to.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.withLock { n += 1 } }
    var value: Int { lock.withLock { n } }
}
