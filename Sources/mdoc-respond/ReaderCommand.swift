import DigitalCredentials
import AnnexCReader
import OpenID4VP
import OpenID4VPReader
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import HPKE
import MdocCBOR
import WebEncoding

/// `mdoc-respond reader`: a verifier for testing wallets.
enum ReaderCommand {
    static let help = """
        usage: mdoc-respond reader request --origin ORIGIN --doctype D --elements ns/elem,... [--doctype D --elements ...]
                                          [--retain] [--framing data|protocol|requests|digital] [--version 1.0|1.1]
                                          [--reader-auth per-document|all --reader-key PEM --reader-chain DER[,DER...]]
                                          [--builtin-reader] --out-request FILE --out-state FILE
               mdoc-respond reader request --protocol openid4vp --origin ORIGIN --doctype D --elements ns/elem,... [...]
                                          [--signing unsigned|signed-dns|signed-hash|multisigned] [--builtin-verifier]
                                          [--response-mode dc_api|dc_api.jwt] [--framing ...] --out-request FILE --out-state FILE
               mdoc-respond reader open --response FILE|- --state FILE [--iaca DER]... [--builtin-iaca] [--clock RFC3339] [--json]

        request: builds a request like a web page and writes it, plus a state file holding the reader's
                 HPKE private key or the verifier's JWE key (test keys) and what was asked. With
                 --protocol openid4vp: an OpenID4VP request over the DC API, one DCQL credential query per
                 --doctype (ids q0, q1, ...), signed by the built-in test verifier (TestVectors/pki/verifier.*)
                 for the signed forms.
        open:    decrypts a response and verifies it as a verifier would: HPKE, issuer signature and chain to
                 an IACA, digests, validity, device signature, only requested elements. Prints what was
                 disclosed; exits 1 on any failure.
        """

    static func run(_ args: [String]) {
        guard let action = args.first, !action.hasPrefix("-") else {
            if args.contains("--help") || args.contains("-h") {
                print(help)
                exit(Exit.ok)
            }
            fail(Exit.usage, "usage", "reader needs 'request' or 'open'; see --help")
        }
        let rest = Array(args.dropFirst())
        switch action {
        case "request":
            if let k = rest.firstIndex(of: "--protocol"), k + 1 < rest.count, rest[k + 1] == "openid4vp" {
                requestOpenID4VP(Array(rest[..<k] + rest[(k + 2)...]))
            } else {
                request(rest.filter { $0 != "--protocol" && $0 != "annexc" })
            }
        case "open": open(rest)
        default: fail(Exit.usage, "usage", "unknown reader action '\(action)'")
        }
    }

    static func request(_ args: [String]) {
        let o = Options(args, flags: ["--retain", "--builtin-reader"], help: help)
        o.check(allowed: [
            "--origin", "--doctype", "--elements", "--framing", "--version", "--reader-auth", "--reader-key",
            "--reader-chain", "--out-request", "--out-state",
        ])
        let (origin, asked) = originAndDocuments(o)
        let docs: [AnnexCReader.DocumentRequest] = asked.map { t, elements in
            .init(docType: t, elements: elements.map { .init($0, intentToRetain: o.flags.contains("--retain")) })
        }
        let framing = requestFraming(o)
        var signing = AnnexCReader.Signing.none
        if let mode = o.value("--reader-auth") {
            let signer: SoftwareSigner
            let chain: [Certificate]
            if o.flags.contains("--builtin-reader") {
                signer = BuiltIn.signer("reader")
                chain = [BuiltIn.certificate("reader")]
            } else {
                guard let s = try? SoftwareSigner(encodedPrivateKey: Input.read(o.require("--reader-key"))) else {
                    fail(Exit.refused, "keyUnavailable", "reader key unreadable")
                }
                signer = s
                chain = o.require("--reader-chain").split(separator: ",").map {
                    Input.certificate(Input.read(String($0)))
                }
            }
            switch mode {
            case "per-document": signing = .perDocument(signer: signer, chain: chain)
            case "all": signing = .all(signer: signer, chain: chain)
            default: fail(Exit.usage, "usage", "--reader-auth must be per-document or all")
            }
        }
        let versionText = o.value("--version") ?? (o.value("--reader-auth") == "all" ? "1.1" : "1.0")
        guard let version = AnnexCReader.Version(rawValue: versionText) else {
            fail(Exit.usage, "usage", "--version must be 1.0 or 1.1")
        }
        do {
            let built = try AnnexCReader.makeRequest(
                documents: docs, origin: origin, framing: framing, signing: signing, version: version)
            writeOutput(built.rawRequest, to: o.require("--out-request"), what: "request")
            let state =
                "{\"origin\":\(jsonString(origin.serialized)),\"encryptionInfo\":\(jsonString(built.encryptionInfo)),\"deviceRequest\":\(jsonString(built.deviceRequest)),"
                + "\"readerKey\":\(jsonString(hex(try built.recipientKey.serialized()))),\"documents\":["
                + docs.map { d in
                    let elements = d.elements.map { jsonString($0.element.description) }.joined(separator: ",")
                    return "{\"docType\":\(jsonString(d.docType)),\"elements\":[\(elements)]}"
                }.joined(separator: ",")
                + "],\"note\":\"readerKey is a freshly generated test key for this request\"}\n"
            writeOutput(Array(state.utf8), to: o.require("--out-state"), what: "state")
        } catch let e as PresentmentError {
            fail(Exit.refused, e.code.rawValue, e.detail)
        } catch {
            fail(Exit.refused, "readerKey", "cannot export the reader key")
        }
    }

    /// Reads a state file written by `reader request`.
    struct State: Decodable {
        struct Doc: Decodable {
            let docType: String
            let elements: [String]
        }
        let origin: String
        let encryptionInfo: String
        let deviceRequest: String
        let readerKey: String
        let documents: [Doc]
    }

    static func loadState(_ path: String) -> AnnexCReader.BuiltRequest {
        guard let j = try? JSONDecoder().decode(State.self, from: Data(Input.read(path))),
            let keyBytes = Input.hexBytes(j.readerKey),
            let origin = try? Origin(j.origin),
            let key = try? HPKE.PrivateKey(serialized: keyBytes, kem: .p256HKDFSHA256)
        else {
            fail(Exit.io, "state", "the state file is not one written by 'reader request'")
        }
        let ei = j.encryptionInfo
        let dr = j.deviceRequest
        let documents: [AnnexCReader.DocumentRequest] = j.documents.map { d in
            let elems = d.elements.compactMap { e -> AnnexCReader.ElementRequest? in
                ElementID(parsing: e).map { .init($0, intentToRetain: false) }
            }
            return .init(docType: d.docType, elements: elems)
        }
        return AnnexCReader.BuiltRequest(
            rawRequest: Data(), recipientKey: key, encryptionInfo: ei, deviceRequest: dr, origin: origin,
            documents: documents)
    }

    /// `--origin`, and each `--doctype` with its `--elements` (namespace/element items), for both forms
    /// of `reader request`.
    static func originAndDocuments(_ o: Options) -> (Origin, [(docType: String, elements: [ElementID])]) {
        let origin: Origin
        do { origin = try Origin(o.require("--origin")) } catch { fail(Exit.usage, error) }
        let types = o.values["--doctype"] ?? []
        let lists = o.values["--elements"] ?? []
        guard !types.isEmpty, types.count == lists.count else {
            fail(Exit.usage, "usage", "give one --elements per --doctype")
        }
        return (
            origin,
            zip(types, lists).map { t, l in
                (
                    t,
                    l.split(separator: ",").map { item in
                        guard let id = ElementID(parsing: String(item)) else {
                            fail(Exit.usage, "usage", "--elements takes namespace/element items")
                        }
                        return id
                    }
                )
            }
        )
    }

    /// `--framing data|protocol|requests|digital` (default digital), for both forms of `reader request`.
    static func requestFraming(_ o: Options) -> RequestFraming {
        switch o.value("--framing") ?? "digital" {
        case "data": .dataObject
        case "protocol": .protocolAndData
        case "requests": .requestList
        case "digital": .digitalRequestList
        default: fail(Exit.usage, "usage", "--framing must be data, protocol, requests or digital")
        }
    }

    /// `reader request --protocol openid4vp`.
    static func requestOpenID4VP(_ args: [String]) {
        let o = Options(args, flags: ["--retain", "--builtin-verifier"], help: help)
        o.check(allowed: [
            "--origin", "--doctype", "--elements", "--framing", "--signing", "--response-mode", "--out-request",
            "--out-state",
        ])
        let (origin, asked) = originAndDocuments(o)
        let queries: [OpenID4VPReader.CredentialQuery] = asked.enumerated().map { k, pair in
            .init(
                id: "q\(k)", docType: pair.docType,
                claims: pair.elements.map { .init($0, intentToRetain: o.flags.contains("--retain") ? true : nil) })
        }
        let framing = requestFraming(o)
        let verifier = {
            (scheme: OpenID4VPReader.ClientIDScheme) -> OpenID4VPReader.Signer in
            guard o.flags.contains("--builtin-verifier") else {
                fail(Exit.usage, "usage", "signed forms need --builtin-verifier (the test verifier of TestVectors/pki)")
            }
            return .init(key: BuiltIn.signer("verifier"), chain: [BuiltIn.certificate("verifier")], clientID: scheme)
        }
        let signing: OpenID4VPReader.Signing
        switch o.value("--signing") ?? "unsigned" {
        case "unsigned": signing = .unsigned
        case "signed-dns": signing = .signed(verifier(.sanDNS("verifier.example")))
        case "signed-hash": signing = .signed(verifier(.hash))
        case "multisigned":
            signing = .multisigned([verifier(.sanDNS("verifier.example")), verifier(.hash)], placement: .topLevel)
        default: fail(Exit.usage, "usage", "--signing must be unsigned, signed-dns, signed-hash or multisigned")
        }
        guard let mode = OpenID4VPResponseMode(rawValue: o.value("--response-mode") ?? "dc_api.jwt") else {
            fail(Exit.usage, "usage", "--response-mode must be dc_api or dc_api.jwt")
        }
        do {
            let built = try OpenID4VPReader.makeRequest(
                queries: queries, origin: origin, signing: signing, framing: framing, responseMode: mode)
            writeOutput(built.rawRequest, to: o.require("--out-request"), what: "request")
            writeOutput(built.state, to: o.require("--out-state"), what: "state")
        } catch {
            fail(Exit.refused, error)
        }
    }

    static func open(_ args: [String]) {
        let o = Options(args, flags: ["--json", "--builtin-iaca"], help: help)
        o.check(allowed: ["--response", "--state", "--iaca", "--clock"])
        var roots = (o.values["--iaca"] ?? []).map { Input.certificate(Input.read($0)) }
        if o.flags.contains("--builtin-iaca") { roots.append(BuiltIn.certificate("iaca")) }
        let response = Data(Input.read(o.require("--response")))
        let stateBytes = Data(Input.read(o.require("--state")))
        if let oid = try? OpenID4VPReader.BuiltRequest(state: stateBytes) {
            do {
                let v = try OpenID4VPReader.openResponse(
                    response, for: oid, issuerRoots: roots, at: parseClock(o.value("--clock")))
                printVerified(
                    v.vpToken.flatMap(\.documents), roots: roots, json: o.flags.contains("--json"),
                    what:
                        "JWE or clear payload, issuer signature\(roots.isEmpty ? "" : " and chain"), digests, validity, device signature over the OpenID4VP transcript, exactly the selected claims"
                )
            } catch {
                refuse(error, json: o.flags.contains("--json"))
            }
            return
        }
        let state = loadState(o.require("--state"))
        do {
            let v = try AnnexCReader.openResponse(
                response, for: state, issuerRoots: roots, at: parseClock(o.value("--clock")))
            printVerified(
                v.documents, roots: roots, json: o.flags.contains("--json"),
                what:
                    "HPKE, issuer signature\(roots.isEmpty ? "" : " and chain"), digests, validity, device signature, only requested elements"
            )
        } catch {
            refuse(error, json: o.flags.contains("--json"))
        }
    }

    /// A response that does not verify: with `--json`, `{"verified": false, "error": {code, rule,
    /// detail}}` on standard output as well (a caller parsing the output gets an answer either way);
    /// exit 1.
    static func refuse(_ error: PresentmentError, json: Bool) -> Never {
        if json {
            print(
                ConsentModelJSON.text(
                    .object([
                        ("verified", .bool(false)),
                        (
                            "error",
                            .object([
                                ("code", .string(error.code.rawValue)), ("rule", .string(error.rule.description)),
                                ("detail", .string(error.detail)),
                            ])
                        ),
                    ])))
        }
        fail(Exit.refused, error)
    }

    /// An element value as JSON, written once (no diagnostic text inside a JSON string): text,
    /// integers, booleans and null as themselves; a byte string as `{"base64url": …}`; a full-date
    /// or date-time tag (1004, 0) as its text; an array or a map (text keys; others as diagnostic
    /// notation) recursively; anything else (a float, another tag) as `{"diagnostic": …}`.
    static func jsonValue(_ v: CBORItem) -> JSONValue {
        switch v.type {
        case .unsignedInt, .negativeInt:
            if let i = v.int64Value { return .number(JSONNumber(i)) }
        case .textString:
            if let s = v.stringValue { return .string(s) }
        case .byteString:
            if let b = v.byteStringSlice { return .object([("base64url", .string(Base64URL.encode(b)))]) }
        case .array:
            return .array(v.children.map(jsonValue))
        case .map:
            var members = [(String, JSONValue)]()
            var key: CBORItem?
            for c in v.children {
                if let k = key {
                    members.append((k.stringValue ?? CBORDiagnostic.describe(k), jsonValue(c)))
                    key = nil
                } else {
                    key = c
                }
            }
            return .object(members)
        case .tag:
            if v.tagNumber == 1004 || v.tagNumber == 0, let s = v.children.first(where: { _ in true })?.stringValue {
                return .string(s)
            }
        default:
            if let b = v.boolValue { return .bool(b) }
            if v.isNull { return .null }
        }
        return .object([("diagnostic", .string(CBORDiagnostic.describe(v)))])
    }

    /// Prints verified documents (values as diagnostic notation; byte strings by length).
    static func printVerified(
        _ documents: [AnnexCReader.VerifiedDocument], roots: [Certificate], json: Bool, what: String
    ) {
        if json {
            let docs: [JSONValue] = documents.map { d in
                .object([
                    ("docType", .string(d.docType)), ("documentSigner", .string(d.documentSigner)),
                    ("elements", .object(d.elements.map { ($0.element.description, jsonValue($0.value)) })),
                ])
            }
            print(
                ConsentModelJSON.text(
                    .object([
                        ("verified", .bool(true)), ("issuerChainChecked", .bool(!roots.isEmpty)),
                        ("documents", .array(docs)),
                    ])))
        } else {
            print("response verified (\(what))")
            for d in documents {
                print("\(d.docType) signed by \(d.documentSigner):")
                for e in d.elements {
                    let value = e.value
                    let shown =
                        value.type == .byteString
                        ? "<\(value.byteStringSlice?.count ?? 0) bytes>" : CBORDiagnostic.describe(value)
                    print("  \(e.element) = \(shown)")
                }
            }
        }
    }
}
