import Foundation
import WebEncoding
import DigitalCredentials
import AnnexCReader
import Presentment

/// The worst case for the JSON reader: a page's request at the 256 KiB limit whose other protocol's
/// entry is an object of 1,000 members with escaped keys of equal length (each differing in its last
/// character), beside a valid `org-iso-mdoc` entry. The engine skips that entry, but must still read
/// it (duplicate keys refused): the work has to stay linear in the input. Before the fix (keys
/// compared pairwise through a copy of the whole input) one such request took 7–9 s.
func worstCaseJSONRequest(_ valid: Data) -> Data {
    let entry = try! JSONSerialization.jsonObject(with: valid) as! [String: Any]
    let mdoc = (entry["digital"] as! [String: Any])["requests"] as! [[String: Any]]
    let mdocJSON = try! JSONSerialization.data(withJSONObject: mdoc[0], options: [.sortedKeys])
    var keys = [String]()
    let budget = 250 * 1024 - mdocJSON.count - 200
    let members = 1000
    let keyChars = budget / members - 4
    for k in 0..<members {
        // "\u0061" × n then a distinct decimal tail: every key is escaped and the same length.
        let tail = String(format: "%06d", k)
        let escapes = String(repeating: "\\u0061", count: max(1, (keyChars - tail.count) / 6))
        keys.append("\"\(escapes)\(tail)\":0")
    }
    let other = "{\"protocol\":\"openid4vp-v1-unsigned\",\"data\":{\(keys.joined(separator: ","))}}"
    let text = "{\"digital\":{\"requests\":[\(other),\(String(decoding: mdocJSON, as: UTF8.self))]}}"
    return Data(text.utf8)
}

/// base64url encoding of a DeviceResponse-sized message (the text both protocols write) at the
/// vector levels this CPU runs, each against the AVX2 steps, interleaved; skipped on a CPU without AVX2.
@MainActor
func base64URLFigures() {
    let level = Base64URL.vectorLevel
    guard level >= 1 else { return }
    let input = [UInt8]((0..<11_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
    var out = [UInt8](repeating: 0, count: Base64URL.encodedLength(input.count))
    func encode(_ l: Int) {
        input.withUnsafeBytes { i in
            out.withUnsafeMutableBufferPointer { Base64URL.encode(i, into: $0.baseAddress!, vectorLevel: l) }
        }
        blackHole(out[0])
    }
    for l in [0, 2] where l <= level {
        let (a, b) = measurePair(
            "webencoding.base64url_encode_11k.level\(l)", "webencoding.base64url_encode_11k.level1",
            bytes: input.count, { encode(l) }, { encode(1) })
        figures.append(a)
        figures.append(b)
    }
}

@MainActor
func jsonFigures() {
    let w = BenchWorld.shared
    let engine = DigitalCredentialsEngine.annexC(w.context, clock: { w.now })
    let origin = try! Origin("https://verifier.example")
    let doc = AnnexCReader.DocumentRequest(
        docType: "org.iso.18013.5.1.mDL", elements: [.init(ElementID(w.ns, "family_name"), intentToRetain: false)])
    let plain = try! AnnexCReader.makeRequest(documents: [doc], origin: origin)
    let worst = worstCaseJSONRequest(plain.rawRequest)
    precondition(worst.count <= 256 * 1024)
    if onlyOp == "json_worst" {
        for _ in 0...opIterations { blackHole(try! engine.accept(rawRequest: worst, origin: origin.serialized)) }
        exit(0)
    }
    figures.append(
        measure("annexc.accept.json_worst_escaped_keys_256k", bytes: worst.count) {
            blackHole(try! engine.accept(rawRequest: worst, origin: origin.serialized))
        })
    figures.append(
        measure("annexc.accept.json_same_request_small", bytes: plain.rawRequest.count) {
            blackHole(try! engine.accept(rawRequest: plain.rawRequest, origin: origin.serialized))
        })
}
