import Foundation
import Testing
import TestSupport
@testable import HPKE

/// One entry of the official RFC 9180 `test-vectors.json`, keys named as in the file.
struct HPKEVector: Decodable {
    struct Encryption: Decodable {
        let aad: String
        let ct: String
        let nonce: String
        let pt: String
    }
    struct Export: Decodable {
        let exporter_context: String
        let L: Int
        let exported_value: String
    }
    let mode: UInt8
    let kem_id: UInt16
    let kdf_id: UInt16
    let aead_id: UInt16
    let info: String
    let ikmR: String
    let ikmE: String
    let ikmS: String?
    let skRm: String
    let skEm: String
    let skSm: String?
    let pkRm: String
    let pkEm: String
    let pkSm: String?
    let psk: String?
    let psk_id: String?
    let enc: String
    let shared_secret: String
    let key: String
    let base_nonce: String
    let exporter_secret: String
    let encryptions: [Encryption]
    let exports: [Export]
}

enum HPKEVectors {
    /// Decoded once per test process (the file is 5.9 MB); a missing or undecodable file is an error.
    static let all: Result<[HPKEVector], any Error> = Result {
        try JSONDecoder().decode([HPKEVector].self, from: try SharedVectors.data("hpke/test-vectors.json"))
    }
}

@Suite("HPKE: RFC 9180 official vectors")
struct RFC9180VectorTests {
    @Test(
        "Every in-scope entry: DeriveKeyPair, enc, shared_secret, key schedule, every encryption and export",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func officialVectors() throws {
        let vectors = try HPKEVectors.all.get()
        #expect(vectors.count == 128, "the file's entry count")
        var perSuite = [String: Int]()
        var encryptions = 0
        var exports = 0
        var skipped = [String]()
        for v in vectors {
            guard let kem = HPKE.KEM(rawValue: v.kem_id), let kdf = HPKE.KDF(rawValue: v.kdf_id),
                let aead = HPKE.AEAD(rawValue: v.aead_id),
                let mode = HPKE.Mode(rawValue: v.mode)
            else {
                skipped.append("kem \(v.kem_id) kdf \(v.kdf_id) aead \(v.aead_id): not in scope")
                continue
            }
            let suite = HPKE.Ciphersuite(kem: kem, kdf: kdf, aead: aead)
            let label = "\(kem)/\(kdf)/\(aead)/\(mode)"

            let skR = try HPKE.PrivateKey.derive(kem: kem, ikm: h(v.ikmR))
            #expect(try skR.serialized() == h(v.skRm), "\(label) skRm")
            #expect(skR.publicKey.serialized == h(v.pkRm), "\(label) pkRm")
            let skE = try HPKE.PrivateKey.derive(kem: kem, ikm: h(v.ikmE))
            #expect(try skE.serialized() == h(v.skEm), "\(label) skEm")
            #expect(skE.publicKey.serialized == h(v.pkEm), "\(label) pkEm")
            var skS: HPKE.PrivateKey?
            if let ikmS = v.ikmS {
                let k = try HPKE.PrivateKey.derive(kem: kem, ikm: h(ikmS))
                #expect(try k.serialized() == h(v.skSm!), "\(label) skSm")
                #expect(k.publicKey.serialized == h(v.pkSm!), "\(label) pkSm")
                skS = k
            }
            // Deserialization of the published keys gives the same keys.
            #expect(try HPKE.PrivateKey(serialized: h(v.skRm), kem: kem).publicKey.serialized == h(v.pkRm))

            let (shared, enc) = try DHKEM(kem).encap(recipient: skR.publicKey, sender: skS, ephemeral: skE)
            #expect(enc == h(v.enc), "\(label) enc")
            #expect(shared == h(v.shared_secret), "\(label) shared_secret")
            #expect(
                try DHKEM(kem).decap(enc: enc, recipient: skR, sender: skS?.publicKey) == h(v.shared_secret),
                "\(label) decap")

            let psk = v.psk.map(h) ?? []
            let pskID = v.psk_id.map(h) ?? []
            let ks = try KeySchedule.derive(
                suite: suite, mode: mode, sharedSecret: shared, info: h(v.info), psk: psk, pskID: pskID)
            #expect(Array(ks.key) == h(v.key), "\(label) key")
            #expect(Array(ks.baseNonce) == h(v.base_nonce), "\(label) base_nonce")
            #expect(Array(ks.exporterSecret) == h(v.exporter_secret), "\(label) exporter_secret")

            let options = HPKE.SetupOptions(psk: psk, pskID: pskID)
            var sender = try HPKE.Sender(
                suite: suite, recipient: skR.publicKey, info: h(v.info), options: options, authenticatedBy: skS,
                ephemeralKey: skE)
            #expect(sender.encapsulatedKey == h(v.enc))
            var recipient = try HPKE.Recipient(
                suite: suite, privateKey: skR, encapsulatedKey: h(v.enc), info: h(v.info), options: options,
                authenticatedBy: skS?.publicKey)
            for (seq, e) in v.encryptions.enumerated() {
                #expect(sender.core.nonce() == h(e.nonce), "\(label) nonce \(seq)")
                let ct = try sender.seal(h(e.pt), aad: h(e.aad))
                #expect(ct == h(e.ct), "\(label) ct \(seq)")
                #expect(try recipient.open(h(e.ct), aad: h(e.aad)) == h(e.pt), "\(label) open \(seq)")
                encryptions += 1
            }
            if aead == .exportOnly {
                #expect(throws: HPKE.Error.exportOnly) { try sender.seal([1]) }
                #expect(throws: HPKE.Error.exportOnly) { try recipient.open([1]) }
            }
            for x in v.exports {
                #expect(
                    try sender.export(context: h(x.exporter_context), length: x.L) == h(x.exported_value),
                    "\(label) export")
                #expect(
                    try recipient.export(context: h(x.exporter_context), length: x.L) == h(x.exported_value),
                    "\(label) export (recipient)")
                exports += 1
            }
            perSuite["\(kem)/\(kdf)/\(aead)", default: 0] += 1
            perSuite["mode \(mode)", default: 0] += 1
        }
        let total = perSuite.filter { !$0.key.hasPrefix("mode") }.values.reduce(0, +)
        print("RFC 9180 vectors: \(total) entries run, \(encryptions) encryptions, \(exports) exports")
        for (k, n) in perSuite.sorted(by: { $0.key < $1.key }) { print("  \(k): \(n)") }
        print("  skipped: \(skipped.isEmpty ? "none" : skipped.joined(separator: "; "))")
        print(
            "  not in the file: DHKEM(P-384, HKDF-SHA384) and HKDF-SHA384 (covered by round trips and the pyhpke cross-check)"
        )
        #expect(total == 128)
        #expect(skipped.isEmpty)
    }
}
