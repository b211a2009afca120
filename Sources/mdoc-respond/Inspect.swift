import Foundation
import MdocCBOR

/// `mdoc-respond inspect`: diagnostic notation of any CBOR file, plus what mdoc structure it is.
enum Inspect {
    static let help = """
    usage: mdoc-respond inspect [--hex] [--no-expand] [--indent N] FILE|-

    Prints the CBOR item in FILE (binary, or hex text) in RFC 8949 diagnostic notation, with the
    contents of tag-24 byte strings expanded as << ... >>, then names the ISO 18013-5 structure it
    parses as (DeviceRequest, DeviceResponse, IssuerSigned, COSE_Sign1, COSE_Key), if any.

      --hex         treat the input as hex text even if it could be binary
      --no-expand   do not expand tag-24 contents
      --indent N    indent nested containers by N spaces (default 2; 0 = one line)
    """

    static func run(_ args: [String]) {
        var forceHex = false, expand = true, indent = 2
        var path: String?
        var i = 0
        while i < args.count {
            switch args[i] {
            case "-h", "--help": print(help); exit(Exit.ok)
            case "--hex": forceHex = true
            case "--no-expand": expand = false
            case "--indent":
                i += 1
                guard i < args.count, let n = Int(args[i]), n >= 0, n <= 8 else { fail(Exit.usage, "usage", "--indent needs a number 0-8") }
                indent = n
            default:
                guard path == nil else { fail(Exit.usage, "usage", "more than one input given") }
                path = args[i]
            }
            i += 1
        }
        guard let path else { fail(Exit.usage, "usage", "no input; see 'mdoc-respond inspect --help'") }
        let bytes = Input.cborBytes(Input.read(path), forceHex: forceHex)
        let doc: CBORDocument
        do {
            doc = try CBORDocument(decoding: bytes)
        } catch {
            fail(Exit.refused, "cbor.\(error.code.rawValue)", "not well-formed CBOR: \(error)")
        }
        print(CBORDiagnostic.describe(doc.root, options: .init(expandEmbedded: expand, indent: indent)))
        print("")
        print("\(bytes.count) bytes, \(doc.itemCount) data items")
        print("structure: \(identify(doc.root))")
    }

    static func identify(_ root: CBORItem) -> String {
        if let r = try? DeviceRequest(root) {
            let docs = r.docRequests.map { "\($0.itemsRequest.docType) (\($0.itemsRequest.elementCount) elements\($0.readerAuth != nil ? ", readerAuth" : ""))" }
            return "DeviceRequest \(r.version): " + docs.joined(separator: "; ") + (r.readerAuthAll.isEmpty ? "" : "; readerAuthAll ×\(r.readerAuthAll.count)")
        }
        if let r = try? DeviceResponse(root) {
            return "DeviceResponse \(r.version), status \(r.status), documents: " + r.documents.map(\.docType).joined(separator: ", ")
        }
        if let s = try? IssuerSigned(root) {
            let mso = try? s.mobileSecurityObject()
            return "IssuerSigned: \(s.nameSpaces.reduce(0) { $0 + $1.items.count }) items" + (mso.map { ", MSO for \($0.docType), valid until \(MdocDate.formatDateTime($0.validityInfo.validUntil))" } ?? "")
        }
        if let m = try? COSESign1(root) {
            return "COSE_Sign1 (\((try? m.algorithm()).map { "\($0)" } ?? "unknown alg"), payload \(m.payload == nil ? "detached" : "attached"))"
        }
        if let k = try? COSEKey(root) {
            return "COSE_Key \(k.curve)"
        }
        return "not a recognised mdoc structure"
    }
}
