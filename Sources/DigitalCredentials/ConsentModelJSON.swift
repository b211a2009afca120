import AnnexC
import MdocCBOR
import OpenID4VP
import Presentment
import WebEncoding

/// The consent model as JSON: everything that shapes what leaves the device, element ids only (never
/// an element value from a credential), written with the project's JSON writer (deterministic, every
/// request-controlled string escaped). One schema, `schemaVersion` 1, shared by the C ABI
/// (`mdoc_request_consent_json`), the Python binding (`Request.consent`) and `mdoc-respond inspect
/// --json` (its `consent` member); documented in `include/mdoc_consent_model.schema.json` and validated
/// against it by the tests. A version is incremented on any change a reader of an older version could
/// misread; members are only added within a version.
package enum ConsentModelJSON {
    /// The schema version written in `schemaVersion`.
    package static let schemaVersion: Int64 = 1

    /// The whole request as JSON text.
    package static func request(_ r: DigitalCredentialsRequest) -> String { text(value(r)) }

    /// A value as JSON text that is also safe to display: besides what JSON requires, DEL, C1
    /// controls, line and paragraph separators and bidirectional controls inside strings are written
    /// as `\uXXXX`, so request-controlled text (docTypes, element names, subjects) can never move a
    /// terminal's cursor or reorder what a consent screen shows around it.
    package static func text(_ v: JSONValue) -> String {
        let raw = String(decoding: v.serialized, as: UTF8.self)
        guard raw.unicodeScalars.contains(where: isDisplayControl) else { return raw }
        var out = String.UnicodeScalarView()
        for u in raw.unicodeScalars {
            guard isDisplayControl(u) else {
                out.append(u)
                continue
            }
            let hex = String(u.value, radix: 16)
            out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
        }
        return String(out)
    }

    /// DEL, C1 controls, U+2028/2029, and the bidirectional controls (the structure around strings is
    /// ASCII, so these only occur inside strings, where the escape is equivalent).
    private static func isDisplayControl(_ u: Unicode.Scalar) -> Bool {
        let v = u.value
        return v == 0x7f || (v >= 0x80 && v < 0xa0) || v == 0x2028 || v == 0x2029 || (v >= 0x202a && v <= 0x202e)
            || (v >= 0x2066 && v <= 0x2069) || v == 0x200e || v == 0x200f
    }

    /// The whole request: protocol and why it was chosen, the request-level verdict, every verified
    /// signer, the OpenID4VP credential query ids (null for Annex C) and every requested document.
    package static func value(_ r: DigitalCredentialsRequest) -> JSONValue {
        let choice: JSONValue =
            r.protocolChoice.map {
                .object([
                    ("reason", .string($0.reason.rawValue)),
                    ("considered", .array($0.considered.map(JSONValue.string))),
                    ("passedOverProofRequests", .array($0.passedOverProofRequests.map(JSONValue.string))),
                ])
            } ?? .null
        return .object([
            ("schemaVersion", .number(JSONNumber(schemaVersion))),
            ("protocol", .string(r.protocolIdentifier)),
            ("protocolChoice", choice),
            ("fixedClock", r.fixedClock.map { .string(MdocDate.formatDateTime($0)) } ?? .null),
            ("readerVerdict", verdict(r.readerVerdict)),
            ("signedByDifferentReaders", .bool(r.signedByDifferentReaders)),
            ("signers", .array(signers(r))),
            (
                "droppedSignatures",
                .array(
                    (r.details.openID4VP?.droppedSignatures ?? []).map {
                        .object([("label", .string($0.label)), ("rule", .string($0.rule.description))])
                    })
            ),
            (
                "credentialQueryIDs",
                r.details.openID4VP.map { .array($0.credentialQueryIDs.map(JSONValue.string)) } ?? .null
            ),
            ("documents", .array(r.documents.map(document))),
        ])
    }

    /// Every verified signature over the request: its label, the OpenID4VP client identifier (null
    /// for Annex C), the signer's certificate subject and its verdict under the holder's policy.
    static func signers(_ r: DigitalCredentialsRequest) -> [JSONValue] {
        r.signatures.map {
            .object([
                ("label", .string($0.label)), ("clientID", $0.clientID.map(JSONValue.string) ?? .null),
                ("subject", .string($0.certificateSubjects.first ?? "")), ("verdict", verdict($0.verdict)),
            ])
        }
    }

    /// One requested document: who asks, each requested element with its intent to retain and the
    /// values the verifier probes for, alternatives honoured and ignored, claim sets, the
    /// zero-knowledge ask, whether it may be presented without elements, and per candidate credential
    /// what would leave the device (and why other credentials of the docType cannot answer).
    package static func document(_ d: RequestedDocument) -> JSONValue {
        func ids(_ l: [ElementID]) -> JSONValue { .array(l.map { .string($0.description) }) }
        let elements: [JSONValue] = d.elements.map { e in
            .object([
                ("id", .string(e.id.description)),
                ("intentToRetain", e.intentToRetain.map(JSONValue.bool) ?? .null),
                ("values", d.valueConstraints[e.id].map { .array($0.map(claimValue)) } ?? .null),
            ])
        }
        let alternatives: [JSONValue] = d.elements.compactMap { e in
            d.alternatives[e.id].map {
                .object([("requested", .string(e.id.description)), ("sets", .array($0.map(ids)))])
            }
        }
        let ignored: [JSONValue] = d.ignoredAlternatives.map {
            .object([
                ("requested", .string($0.requested.description)), ("set", ids($0.set)),
                ("reason", .string($0.reason.rawValue)),
            ])
        }
        let candidates: [JSONValue] = d.candidates.map { c in
            .object([
                ("credential", .string(c.credentialID)), ("releasable", ids(c.releasable)),
                (
                    "substitutions",
                    .array(
                        c.substitutions.map {
                            .object([
                                ("requested", .string($0.requested.description)), ("replacement", ids($0.replacement)),
                            ])
                        })
                ),
                ("missing", ids(c.missing)), ("wouldRelease", ids(c.shownElements)),
                (
                    "provenClaims",
                    .array(
                        c.provenClaims.map {
                            .object([("element", .string($0.element.description)), ("value", .string($0.value))])
                        })
                ),
            ])
        }
        let zk: JSONValue = d.zeroKnowledge.map(zeroKnowledge) ?? .null
        return .object([
            ("index", .number(JSONNumber(Int64(d.index)))),
            ("docType", .string(d.docType)),
            ("readerVerdict", verdict(d.readerVerdict)),
            ("readerAuthentication", .array(d.readerAuthentication.map(JSONValue.string))),
            ("requested", ids(d.elements.map(\.id))),
            ("elements", .array(elements)),
            ("alternatives", .array(alternatives)),
            ("ignoredAlternatives", .array(ignored)),
            ("claimSets", .array(d.claimSets.map(ids))),
            ("valueRestricted", ids(d.valueConstraints.keys.sorted())),
            ("maximumResponseSize", d.maximumResponseSize.map { .number(JSONNumber(Int64(clamping: $0))) } ?? .null),
            ("presentableWithoutElements", .bool(d.presentableWithoutElements)),
            ("zeroKnowledge", zk),
            ("candidates", .array(candidates)),
            (
                "excluded",
                .array(
                    d.excluded.map {
                        .object([("credential", .string($0.credentialID)), ("reason", .string($0.reason.rawValue))])
                    })
            ),
        ])
    }

    /// A proof request and how it is answered: a proof (its system spec, what it reveals, the expected
    /// time) or the plain fallback the holder must approve separately (why, and what it reveals).
    static func zeroKnowledge(_ z: ZeroKnowledgeOffer) -> JSONValue {
        let answer: JSONValue
        switch z.answer {
        case .proof(let spec, let seconds):
            answer = .object([
                ("form", .string("proof")), ("zkSystemId", .string(spec.id)), ("system", .string(spec.system)),
                ("circuitHash", spec.circuitHash.map(JSONValue.string) ?? .null),
                ("version", spec.version.map { .number(JSONNumber(Int64($0))) } ?? .null),
                ("attributes", spec.attributeCount.map { .number(JSONNumber(Int64($0))) } ?? .null),
                ("expectedSeconds", .number(JSONNumber(Int64(seconds.rounded(.up))))),
                ("reveals", .array(ZeroKnowledgeOffer.proofReveals.map(JSONValue.string))),
            ])
        case .plainFallback(let why):
            answer = .object([
                ("form", .string("plainFallback")), ("why", .string(why.description)), ("needsApproval", .bool(true)),
                ("reveals", .array(ZeroKnowledgeOffer.plainPresentationReveals.map(JSONValue.string))),
            ])
        }
        return .object([
            ("required", .bool(z.required)), ("systems", .array(z.systems.map(JSONValue.string))),
            ("systemIDs", .array(z.systemIDs.map(JSONValue.string))),
            ("plainPresentationReveals", .array(ZeroKnowledgeOffer.plainPresentationReveals.map(JSONValue.string))),
            ("answer", answer),
        ])
    }

    /// A value the verifier probes for (DCQL `values`), as the JSON it was sent as.
    static func claimValue(_ v: ClaimValue) -> JSONValue {
        switch v {
        case .text(let s): .string(s)
        case .integer(let i): .number(JSONNumber(i))
        case .bool(let b): .bool(b)
        }
    }

    /// A reader verdict: `notAuthenticated`, `trusted` (subject, AKI in hex) or `signedNotTrusted`
    /// (subject and reason).
    package static func verdict(_ v: ReaderVerdict) -> JSONValue {
        switch v {
        case .notAuthenticated: .object([("status", .string("notAuthenticated"))])
        case .trusted(let s, let aki):
            .object([
                ("status", .string("trusted")), ("subject", .string(s)),
                ("authorityKeyIdentifier", aki.map { .string(hexString($0)) } ?? .null),
            ])
        case .signedNotTrusted(let s, let reason):
            .object([
                ("status", .string("signedNotTrusted")), ("subject", .string(s)), ("reason", .string(reason.rawValue)),
            ])
        }
    }
}
