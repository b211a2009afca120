// Fuzz target: the zkRequest reader and the zero-knowledge decision and answer. The input is the CBOR
// of a `requestInfo.zkRequest` value (anything: maps, specs, params of every type), placed in an
// otherwise valid Annex C request for the built-in age attestation's age_over_18. A stub prover holds
// a circuit for every `longfellow-libzk-v1` spec with a matching attribute count, and "proves" with
// fixed bytes, so the whole path runs in microseconds.
//
// Properties: parse, accept and respond refuse with a PresentmentError or answer, never crash; accept
// and respond(to: parse(…)) agree on the code; a document the engine answers with a proof comes back
// as one ZkDocument (no plain document) echoing the chosen spec's id, which reads back with the
// ZkDocument reader; a request that requires a proof never gets a plain document.
@_spi(Testing) import DigitalCredentials
@_spi(Testing) import HPKE
import FoundationEssentials
import FuzzSupport
import MdocCBOR

struct StubProver: ZeroKnowledgeProver {
    var expectedProvingSeconds: Double { 0 }
    func circuit(for specs: [ZkSystemSpec], claims: Int) -> ZkSystemSpec? {
        specs.first { $0.system == "longfellow-libzk-v1" && $0.attributeCount == claims }
    }
    func prove(_ input: ZkProofInput) throws(PresentmentError) -> [UInt8] { [UInt8](repeating: 0xab, count: 64) }
}

let ephemeral = try! HPKE.PrivateKey.derive(kem: .p256HKDFSHA256, ikm: [UInt8](repeating: 7, count: 32))
let engine = fuzzEngine(protocols: [.annexC], prover: StubProver(), hpke: ephemeral)
let recipient = try! HPKE.PrivateKey.derive(kem: .p256HKDFSHA256, ikm: [UInt8](repeating: 9, count: 32))

func b64u(_ b: [UInt8]) -> String {
    String(
        Data(b).base64EncodedString().compactMap { c -> Character? in
            c == "+" ? "-" : c == "/" ? "_" : c == "=" ? nil : c
        })
}

/// EncryptionInfo for the fixed recipient key, as a verifier writes it.
let encryptionInfo: String = {
    let point = recipient.publicKey.serialized  // 0x04 ‖ x ‖ y
    var w = CBORWriter(capacity: 128)
    w.writeArrayHeader(count: 2)
    w.writeText("dcapi")
    w.writeMapHeader(count: 2)
    w.writeText("nonce")
    w.writeBytes([UInt8](repeating: 1, count: 16))
    w.writeText("recipientPublicKey")
    w.writeMapHeader(count: 4)
    w.writeInt(1)
    w.writeInt(2)
    w.writeInt(-1)
    w.writeInt(1)
    w.writeInt(-2)
    w.writeBytes(Array(point[1..<33]))
    w.writeInt(-3)
    w.writeBytes(Array(point[33..<65]))
    return b64u(w.bytes)
}()

/// A 1.1 DeviceRequest for eu.europa.ec.av.1/age_over_18 whose requestInfo.zkRequest is `zk` (raw CBOR).
func request(_ zk: [UInt8]) -> Data {
    var items = CBORWriter(capacity: zk.count + 128)
    items.writeMapHeader(count: 3)
    items.writeText("docType")
    items.writeText("eu.europa.ec.av.1")
    items.writeText("nameSpaces")
    items.writeMapHeader(count: 1)
    items.writeText("eu.europa.ec.av.1")
    items.writeMapHeader(count: 1)
    items.writeText("age_over_18")
    items.writeBool(false)
    items.writeText("requestInfo")
    items.writeMapHeader(count: 1)
    items.writeText("zkRequest")
    items.writeRaw(zk)
    var dr = CBORWriter(capacity: items.bytes.count + 64)
    dr.writeMapHeader(count: 2)
    dr.writeText("version")
    dr.writeText("1.1")
    dr.writeText("docRequests")
    dr.writeArrayHeader(count: 1)
    dr.writeMapHeader(count: 1)
    dr.writeText("itemsRequest")
    dr.writeEmbedded(items.bytes)
    return Data(#"{"deviceRequest":"\#(b64u(dr.bytes))","encryptionInfo":"\#(encryptionInfo)"}"#.utf8)
}

/// The DeviceResponse inside an answer, opened with the verifier's key.
func plaintext(_ response: Data, _ p: DigitalCredentialsRequest) -> DeviceResponse {
    let sealed = encryptedResponse(response)
    let opened = try! HPKE.open(
        suite: .annexC, privateKey: recipient, encapsulatedKey: sealed.enc, info: p.sessionTranscriptBytes,
        ciphertext: sealed.cipherText)
    return try! DeviceResponse(encoded: opened)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let zk = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    // Only one well-formed CBOR data item can sit in the request; anything else is refused early.
    guard (try? CBORDocument(decoding: zk)) != nil else { return 0 }
    let raw = request(zk)
    let origin = "https://verifier.example"
    let accepted = Result { () throws(PresentmentError) in try engine.accept(rawRequest: raw, origin: origin) }
    let parsed: DigitalCredentialsRequest
    do { parsed = try engine.parse(rawRequest: raw, origin: origin) } catch {
        if case .success = accepted { fatalError("accept answered a request parse refused") }
        return 0
    }
    let responded = Result { () throws(PresentmentError) in try engine.respond(to: parsed) }
    switch (accepted, responded) {
    case (.failure(let a), .failure(let r)):
        precondition(a.code == r.code, "accept and respond refuse differently: \(a.code) \(r.code)")
    case (.success, .failure), (.failure, .success): fatalError("accept and respond disagree")
    case (.success(let a), .success(let r)):
        let offer = parsed.documents[0].zeroKnowledge
        for out in [a, r] {
            let dr = plaintext(out, parsed)
            if case .proof(let spec, _)? = offer?.answer {
                precondition(dr.documents.isEmpty && dr.zkDocuments.count == 1, "a proven document left in plain")
                precondition(dr.zkDocuments[0].zkSystemID == spec.id, "the spec's id is not echoed")
                precondition(dr.zkDocuments[0].claims.map(\.identifier) == ["age_over_18"], "other claims")
            } else {
                precondition(offer == nil || offer?.required == false, "a required proof answered in plain")
            }
        }
    }
    return 0
}
