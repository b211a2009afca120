import DCAPIFraming
import Presentment

/// What the engine did with a request, for debugging and `mdoc-respond inspect`: the framing, the
/// origin, each protocol structure and signature the checks reached, the consent model when the request
/// parsed, and the refusal when it did not. Holds structure bytes and certificate subjects, never element
/// values or keys.
public struct Explanation: Sendable {
    /// How the request was framed; nil when the framing itself is unreadable.
    public var framing: RequestFraming?
    /// The serialized origin, when it is valid.
    public var origin: String?
    /// The structures and signatures of the entry explained (the one answered, or the one refused).
    public var trace: CheckTrace
    /// The consent model and the protocol's details, when the request parsed.
    public var request: DigitalCredentialsRequest?
    /// The refusal that stopped processing, if any.
    public var error: PresentmentError?
    /// When the request parsed: the refusal `respond` would give approving everything shown (a
    /// selection or proof refusal: nothing to release, no usable credential, a proof that cannot be
    /// made, a fallback not approved), found by planning alone (nothing is signed or proven); nil when
    /// it would answer.
    public var respondWouldRefuse: PresentmentError?

    init() { trace = CheckTrace() }

    /// One line per requested document: what each candidate would release (substitutes named with what
    /// they replace), what it lacks, and alternatives not honoured.
    public var selection: [String] { request?.documents.map(Self.describe) ?? [] }

    static func describe(_ d: RequestedDocument) -> String {
        var line = "docRequests[\(d.index)] \(d.docType): \(d.elements.count) elements requested; "
        line +=
            d.candidates.isEmpty
            ? "no usable credential"
            : d.candidates.map { c in
                "\(c.credentialID) can release \(c.shownElements.count)"
                    + (c.releasable.isEmpty ? "" : " [\(c.releasable.map(\.identifier).joined(separator: ", "))]")
                    + c.substitutions.map {
                        ", replaces \($0.requested.identifier) with [\($0.replacement.map(\.identifier).joined(separator: ", "))]"
                    }.joined()
                    + (c.missing.isEmpty ? "" : ", lacks [\(c.missing.map(\.identifier).joined(separator: ", "))]")
            }.joined(separator: "; ")
        for i in d.ignoredAlternatives {
            line +=
                "; alternative for \(i.requested.identifier) not honoured (\(i.reason.rawValue)): [\(i.set.map(\.description).joined(separator: ", "))]"
        }
        return line
    }
}
