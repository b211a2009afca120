import Foundation
import CryptoCore
import MdocCBOR
import DigitalCredentials
import AnnexCReader
import PKCS11

// MARK: Device keys in a PKCS#11 token (SoftHSM2): accept beside the in-process key, and the signer alone

/// `accept` on the reference request with the benchmark mDL's device key imported into a SoftHSM2
/// token (sandboxed in a temporary directory), interleaved with the same `accept` on the in-process
/// key; and one device signature through each signer. The difference is the token's cost per
/// response: its one `C_SignInit` + `C_Sign` (SoftHSM2 signs with OpenSSL in this process), the
/// session taken from and returned to the pool, and the digest computed here.
@MainActor
func pkcs11Figures() {
    if let filter, !"annexc.accept.reference_softhsm2 sign.p256.softhsm2_module_only".contains(filter) { return }
    guard SoftHSM2Sandbox.installedModule != nil else {
        if !jsonOnly {
            print("NOTICE: SoftHSM2 not installed (apt-get install softhsm2); the PKCS#11 figures are skipped")
        }
        return
    }
    let w = BenchWorld.shared
    let token: SoftHSM2Sandbox.Token
    let uri: PKCS11URI
    do {
        token = try SoftHSM2Sandbox.shared().makeToken(label: "mdoc-bench")
        uri = token.uri(object: "mdl", id: [0x01])
        var scalar = try w.deviceKey.privateKey.exportSecret()
        defer { SecureBytes.cleanse(&scalar) }
        try PKCS11KeyGeneration.importTestKey(
            uri, curve: .p256, scalar: scalar, publicKey: w.deviceKey.publicKey)
    } catch {
        print("NOTICE: the SoftHSM2 token could not be set up (\(error)); the PKCS#11 figures are skipped")
        return
    }
    var entries = w.context.entries
    entries[0].deviceKeyReference = uri.string
    let tokenContext = try! CredentialContext(
        entries: entries, readerTrust: w.context.readerTrust, keyResolver: PKCS11KeyResolver())
    let now = w.now
    let inProcess = DigitalCredentialsEngine.annexC(w.context, clock: { now })
    let inToken = DigitalCredentialsEngine.annexC(tokenContext, clock: { now })
    let origin = try! Origin("https://verifier.example")
    let doc = AnnexCReader.DocumentRequest(
        docType: "org.iso.18013.5.1.mDL",
        elements: w.elements.map { .init(ElementID(w.ns, $0.identifier), intentToRetain: false) })
    let request = try! AnnexCReader.makeRequest(documents: [doc], origin: origin)
    let (a, b) = measurePair(
        "annexc.accept.reference_softhsm2", "annexc.accept.reference_in_process",
        { blackHole(try! inToken.accept(rawRequest: request.rawRequest, origin: origin.serialized)) },
        { blackHole(try! inProcess.accept(rawRequest: request.rawRequest, origin: origin.serialized)) })
    let tokenSigner = try! PKCS11Signer(uri: uri)
    // A DeviceAuthentication Sig_structure of the reference request's size.
    let tbs = [UInt8](repeating: 0x5A, count: 160)
    let (s, t) = measurePair(
        "sign.p256.softhsm2", "sign.p256.in_process", { blackHole(try! tokenSigner.sign(tbs)) },
        { blackHole(try! w.deviceKey.sign(tbs)) })
    // The token alone: C_SignInit + C_Sign on one held session with a precomputed digest. The
    // signer's own cost per call is sign.p256.softhsm2 minus this (digest, pool, handle, checks).
    let sessions = try! TokenSessions.forURI(uri)
    let module = sessions.module
    let session = try! module.openSession(slot: sessions.slot)
    let handle = try! module.findObjects(
        session,
        [
            .ulong(PKCS11Module.AttributeType.objectClass, PKCS11Module.ObjectClass.privateKey),
            .bytes(PKCS11Module.AttributeType.id, [0x01]),
        ])[0]
    let digest = DigestAlgorithm.sha256.hash(tbs)
    let (r, _) = measurePair(
        "sign.p256.softhsm2_module_only", "sign.p256.softhsm2",
        { blackHole(try! digest.withUnsafeBytes { try module.signECDSA(session, key: handle, digest: $0) }) },
        { blackHole(try! tokenSigner.sign(tbs)) })
    module.closeSession(session)
    figures += [a, b, s, t, r]
}
