import MdocCBOR
import OpenID4VP
import Presentment

/// The consent model as JSON: what a consent screen shows, element ids only (never element values),
/// with the same field names as `mdoc-respond inspect --json`. The CLI and the C ABI both write it
/// from here. Request-controlled strings (docTypes, element names, certificate subjects) are JSON
/// string-escaped.
public enum ConsentModelJSON {
    /// The whole request: protocol, the request-level reader verdict, whether different readers
    /// signed, the OpenID4VP credential query ids (null for Annex C) and every requested document.
    public static func request(_ r: PresentmentRequest) -> String {
        let queries = r.openID4VP.map { "[" + $0.credentialQueryIDs.map(string).joined(separator: ",") + "]" } ?? "null"
        return "{\"protocol\":\(string(r.protocolIdentifier)),\"readerVerdict\":\(verdict(r.readerVerdict)),"
            + "\"signedByDifferentReaders\":\(r.signedByDifferentReaders),\"credentialQueryIDs\":\(queries),"
            + "\"documents\":[\(r.documents.map(document).joined(separator: ","))]}"
    }

    /// One requested document: who asks, what is asked, alternatives honoured and ignored, claim sets,
    /// value-restricted elements, and per candidate credential what would leave the device.
    public static func document(_ d: RequestedDocument) -> String {
        func ids(_ l: [ElementID]) -> String { "[" + l.map { string($0.description) }.joined(separator: ",") + "]" }
        let alternatives = d.elements.compactMap { e in
            d.alternatives[e.id].map {
                "{\"requested\":\(string(e.id.description)),\"sets\":[\($0.map(ids).joined(separator: ","))]}"
            }
        }
        let ignored = d.ignoredAlternatives.map {
            "{\"requested\":\(string($0.requested.description)),\"set\":\(ids($0.set)),\"reason\":\(string($0.reason.rawValue))}"
        }
        let candidates = d.candidates.map { c in
            "{\"credential\":\(string(c.credentialID)),\"releasable\":\(ids(c.releasable)),\"substitutions\":["
                + c.substitutions.map {
                    "{\"requested\":\(string($0.requested.description)),\"replacement\":\(ids($0.replacement))}"
                }.joined(separator: ",")
                + "],\"missing\":\(ids(c.missing)),\"wouldRelease\":\(ids(c.shownElements))}"
        }
        return
            "{\"index\":\(d.index),\"docType\":\(string(d.docType)),\"readerVerdict\":\(verdict(d.readerVerdict)),"
            + "\"readerAuthentication\":[\(d.readerAuthentication.map(string).joined(separator: ","))],\"requested\":\(ids(d.elements.map(\.id))),"
            + "\"alternatives\":[\(alternatives.joined(separator: ","))],\"ignoredAlternatives\":[\(ignored.joined(separator: ","))],"
            + "\"claimSets\":[\(d.claimSets.map(ids).joined(separator: ","))],\"valueRestricted\":\(ids(d.valueConstraints.keys.sorted())),"
            + "\"candidates\":[\(candidates.joined(separator: ","))]}"
    }

    /// A reader verdict: `notAuthenticated`, `trusted` (subject, AKI in hex) or `signedNotTrusted`
    /// (subject and reason).
    public static func verdict(_ v: ReaderVerdict) -> String {
        switch v {
        case .notAuthenticated: "{\"status\":\"notAuthenticated\"}"
        case .trusted(let s, let aki):
            "{\"status\":\"trusted\",\"subject\":\(string(s)),\"authorityKeyIdentifier\":\(aki.map { string(hex($0)) } ?? "null")}"
        case .signedNotTrusted(let s, let reason):
            "{\"status\":\"signedNotTrusted\",\"subject\":\(string(s)),\"reason\":\(string(reason.rawValue))}"
        }
    }

    /// A JSON string literal.
    public static func string(_ s: String) -> String { CBORDiagnostic.quoted(s) }

    private static func hex(_ b: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(b.count * 2)
        for x in b {
            out.append(digits[Int(x >> 4)])
            out.append(digits[Int(x & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
