import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import CryptoCore
import MdocCBOR
import DigitalCredentials
import OpenID4VP
import OpenID4VPReader
import Presentment
import WebEncoding

/// The cryptographic floor of answering an OpenID4VP `dc_api.jwt` request: what no implementation
/// can skip — import and validate the verifier's key, its RFC 7638 thumbprint and the handover
/// hash (SHA-256), one key generation, one ECDH, the Concat KDF (one SHA-256), one ECDSA signature
/// over DeviceAuthentication, and AES-256-GCM over a payload of the size the engine sends. A signed
/// request adds the JWS verification and the chain check.
struct OpenID4VPFloor {
    let devKey = try! CryptoCore.PrivateKey.generate(.ec(.p256))
    let x: [UInt8], y: [UInt8]
    let thumbprintInput = [UInt8](repeating: 1, count: 120)
    let handoverInfo: [UInt8]
    let kdfRound = [UInt8](repeating: 2, count: 4 + 32 + 4 + 7 + 12)
    let tbs = [UInt8](repeating: 4, count: 120)
    let cek = [UInt8](repeating: 5, count: 32)
    let payload: [UInt8]
    let aad: [UInt8]

    init(built: OpenID4VPReader.BuiltRequest, payloadSize: Int, headerSize: Int) {
        let k = try! CryptoCore.PrivateKey.generate(.ec(.p256))
        (x, y) = k.publicKey.coordinates!
        handoverInfo = [UInt8](
            repeating: 3, count: 3 + 2 + built.origin.serialized.utf8.count + 2 + built.nonce.utf8.count + 34)
        payload = [UInt8](repeating: 7, count: payloadSize)
        aad = [UInt8](repeating: 8, count: headerSize)
    }

    func run() {
        // The verifier's key as the engine holds it: imported from the JWK's coordinates.
        let verifier = try! CryptoCore.PublicKey(curve: .p256, x: x, y: y)
        blackHole(DigestAlgorithm.sha256.hash(thumbprintInput))
        blackHole(DigestAlgorithm.sha256.hash(handoverInfo))
        let e = try! CryptoCore.PrivateKey.generateForAgreement(.ec(.p256))
        blackHole(e.publicKey.rawRepresentation)
        blackHole(try! e.sharedSecret(with: verifier))
        blackHole(DigestAlgorithm.sha256.hash(kdfRound))
        blackHole(try! devKey.signECDSA(message: tbs, digest: .sha256))
        // A fresh 96-bit IV, as RFC 7516 (5.1, step 9) has every JWE generate one: protocol cryptography
        // the engine cannot skip, so the floor pays it too.
        let iv = try! SecureBytes.random(count: 12)
        blackHole(try! AEADAlgorithm.aes256gcm.seal(key: cek, nonce: iv, plaintext: payload, aad: aad))
    }
}

@MainActor
func openID4VPFigures() {
    let w = BenchWorld.shared
    let engine = DigitalCredentialsEngine.openID4VP(w.context, clock: { w.now })
    let origin = try! Origin("https://verifier.example")
    let query = OpenID4VPReader.CredentialQuery(
        id: "mdl", docType: "org.iso.18013.5.1.mDL", claims: w.elements.map { .init(ElementID(w.ns, $0.identifier)) })
    let unsigned = try! OpenID4VPReader.makeRequest(queries: [query], origin: origin)
    let signed = try! OpenID4VPReader.makeRequest(
        queries: [query], origin: origin,
        signing: .signed(.init(key: w.verifierKey, chain: [w.verifierCert], clientID: .sanDNS("verifier.example"))))
    // The sizes the engine produces: the JWE payload and the protected header (AAD).
    let answer = try! engine.accept(rawRequest: unsigned.rawRequest, origin: origin.serialized)
    let outer = try! JSONSerialization.jsonObject(with: answer) as! [String: Any]
    let jwe = ((outer["data"] as? [String: Any]) ?? outer)["response"] as! String
    let parts = jwe.split(separator: ".", omittingEmptySubsequences: false)
    let payloadSize = parts[3].utf8.count * 3 / 4
    let floor = OpenID4VPFloor(built: unsigned, payloadSize: payloadSize, headerSize: parts[0].utf8.count)
    // The floor with the protocol's own byte transforms added, as a second reference: the JWE compact
    // serialization (RFC 7516, 7.1) is base64url of the protected header and of the ciphertext, and an
    // mso_mdoc presentation in `vp_token` is the base64url of the DeviceResponse (OpenID4VP 1.0,
    // Appendix B, mdocs, Presentation Response): no implementation answers without these three
    // encodings. Encoded with the engine's encoder (AVX2 where the CPU has it) into arrays of their
    // final size; the DeviceResponse's size is the plaintext's less the `vp_token` framing around it.
    let framing = #"{"vp_token":{"mdl":[""#.utf8.count + #""]}}"#.utf8.count
    let encodings = [
        [UInt8](repeating: 6, count: (payloadSize - framing) * 3 / 4),
        [UInt8](repeating: 8, count: parts[0].utf8.count * 3 / 4),
        [UInt8](repeating: 7, count: payloadSize),
    ]
    let encodedFloor = {
        floor.run()
        for bytes in encodings {
            var out = [UInt8]()
            out.reserveCapacity(Base64URL.encodedLength(bytes.count))
            bytes.withUnsafeBytes { Base64URL.encode($0, appendingTo: &out) }
            blackHole(out)
        }
    }
    // The verifier's signature as the engine checks it: the leaf key from the certificate.
    let verifierPub = try! X509Certificate(der: w.verifierCert.der).publicKey()
    // A signing input of the request's size: its JWS up to the second dot.
    let compact =
        try! JSONDocument([UInt8](signed.rawRequest)).root["digital"]?["requests"]?.elements?[0]["data"]?[
            "request"]?.string ?? ""
    let segments = compact.split(separator: ".", omittingEmptySubsequences: false)
    let jwsInput = [UInt8](repeating: 9, count: segments[0].utf8.count + 1 + segments[1].utf8.count)
    let jwsSig = try! w.verifierKey.privateKey.signECDSA(message: jwsInput, digest: .sha256)
    let signedFloor = {
        floor.run()
        blackHole(try! verifierPub.verifyECDSA(signature: jwsSig, message: jwsInput, digest: .sha256))
        try! Certificate.validatePath(leaf: w.verifierCert, anchors: [w.root], at: w.now)
    }
    if let op = onlyOp {
        let body: () -> Void
        switch op {
        case "oid4vp_accept":
            body = { blackHole(try! engine.accept(rawRequest: unsigned.rawRequest, origin: origin.serialized)) }
        case "oid4vp_floor": body = floor.run
        case "oid4vp_floor_encoded": body = encodedFloor
        case "oid4vp_accept_signed":
            body = { blackHole(try! engine.accept(rawRequest: signed.rawRequest, origin: origin.serialized)) }
        case "oid4vp_floor_signed": body = signedFloor
        case "oid4vp_parse":
            body = { blackHole(try! engine.parse(rawRequest: unsigned.rawRequest, origin: origin.serialized)) }
        case "oid4vp_json":
            // The request's JSON alone (the tape parser every JSON request goes through).
            let bytes = [UInt8](unsigned.rawRequest)
            body = { blackHole(try! JSONDocument(bytes, limits: JSONValue.Limits()).root.isObject) }
        default: return
        }
        runOperation(body)
    }
    let (a, f) = measurePair(
        "oid4vp.accept.unsigned_dc_api_jwt", "floor.oid4vp.unsigned_dc_api_jwt", bytes: payloadSize,
        { blackHole(try! engine.accept(rawRequest: unsigned.rawRequest, origin: origin.serialized)) }, floor.run)
    let (b, g) = measurePair(
        "oid4vp.accept.signed_dc_api_jwt", "floor.oid4vp.signed_dc_api_jwt", bytes: payloadSize,
        { blackHole(try! engine.accept(rawRequest: signed.rawRequest, origin: origin.serialized)) }, signedFloor)
    let (c, h) = measurePair(
        "oid4vp.accept.unsigned_dc_api_jwt.against_encoded_floor", "floor.oid4vp.unsigned_dc_api_jwt_encoded",
        bytes: payloadSize,
        { blackHole(try! engine.accept(rawRequest: unsigned.rawRequest, origin: origin.serialized)) }, encodedFloor)
    figures += [a, f, b, g, c, h]
    figures.append(measureParse("oid4vp.stage.parse_unsigned", engine, unsigned.rawRequest, origin))
    figures.append(measureParse("oid4vp.stage.parse_signed", engine, signed.rawRequest, origin))
}
