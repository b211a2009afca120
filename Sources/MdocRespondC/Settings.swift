#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import CMdocRespondABI
import DigitalCredentials
import MdocCBOR
import PKCS11
import Presentment
import WebEncoding

/// A refusal at the C boundary: a status number from the header and static detail text.
package struct ABIFailure: Error, Sendable {
    /// The `MDOC_ERR_*` number.
    package let code: Int32
    /// Which argument or rule (static text; never input content).
    package let detail: String

    package init(_ code: Int32, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// The same refusal the Swift API made, under its fixed ABI number; the detail starts with the
    /// rule that refused (`domain.rule: `), then its words.
    package init(_ e: PresentmentError) {
        self.init(ABIStatus.number(e.code), "\(e.rule): \(e.detail)")
    }
}

/// An engine's settings as the configuration JSON of `mdoc_respond.h` gives them.
package struct ABISettings: Sendable {
    package var annexC = AnnexCEngine.Configuration()
    package var openID4VP = OpenID4VPEngine.Configuration()
    package var preference = DigitalCredentialsEngine.Preference.answerable
    /// Replacements for the context's reader-trust policy, field by field.
    package var anchors: [Certificate]?
    package var authorities: [[UInt8]]?
    package var requireReaderAuthentication: Bool?
    package var requireTrustedReader: Bool?
    package var signerProfile: SignerProfile?
    /// `trust.replacePolicy`: the trust members replace the stored policy even where they widen it.
    /// Without it a configuration may only narrow the holder's stored policy.
    package var replacePolicy = false
    /// Where a snapshot engine finds relative key files.
    package var keyDirectory: String?
    /// The directories `pkcs11:` keys' modules may be loaded from (`pkcs11ModuleDirectories`).
    package var moduleDirectories = PKCS11ModuleDirectories.system

    /// The largest request either protocol accepts (checked before the request is read).
    package var maxRequestBytes: Int { max(annexC.maxRequestBytes, openID4VP.maxRequestBytes) }

    package init() {}

    /// Reads configuration JSON; nil means the defaults. Unknown members are refused.
    package init(json: [UInt8]?) throws(ABIFailure) {
        guard let json else { return }
        let root = try Self.parseObject(json, code: MDOC_ERR_INVALID_CONFIGURATION, what: "configuration")
        func fail(_ d: String) -> ABIFailure { ABIFailure(MDOC_ERR_INVALID_CONFIGURATION, d) }
        func bool(_ v: JSONValue, _ name: String) throws(ABIFailure) -> Bool {
            guard let b = v.bool else { throw fail("\(name) must be true or false") }
            return b
        }
        for (key, value) in root {
            switch key {
            case "clock":
                guard let s = value.string, let date = MdocDate.parseDateTime(s) else {
                    throw fail("clock must be an RFC 3339 date-time like 2026-06-01T00:00:00Z")
                }
                annexC.clock = { date }
                openID4VP.clock = { date }
            case "protocol":
                guard let s = value.string, let p = DigitalCredentialsEngine.Preference(rawValue: s) else {
                    throw fail("protocol must be answerable, annexC or openID4VP")
                }
                preference = p
            case "missingElements":
                switch value.string {
                case "omit": annexC.missingElements = .omit
                case "report": annexC.missingElements = .report
                default: throw fail("missingElements must be omit or report")
                }
            case "selfCheck":
                let b = try bool(value, key)
                annexC.selfCheck = b
                openID4VP.selfCheck = b
            case "allowAppOrigins":
                let b = try bool(value, key)
                annexC.allowAppOrigins = b
                openID4VP.allowAppOrigins = b
            case "preferA256GCM": openID4VP.preferA256GCM = try bool(value, key)
            case "limits": try readLimits(value)
            case "trust": try readTrust(value)
            case "pkcs11ModuleDirectories":
                guard let list = value.array, list.count <= 64,
                    list.allSatisfy({ ($0.string?.hasPrefix("/") ?? false) && !$0.string!.utf8.contains(0) })
                else { throw fail("pkcs11ModuleDirectories must be an array of absolute directory paths") }
                moduleDirectories = list.map { $0.string! }
            case "keyDirectory":
                guard let s = value.string, !s.isEmpty, !s.utf8.contains(0) else {
                    throw fail("keyDirectory must be a non-empty path")
                }
                keyDirectory = s
            default: throw fail("unknown configuration member (see mdoc_respond.h)")
            }
        }
    }

    private mutating func readLimits(_ value: JSONValue) throws(ABIFailure) {
        guard let members = value.object else {
            throw ABIFailure(MDOC_ERR_INVALID_CONFIGURATION, "limits must be an object")
        }
        for (key, v) in members {
            guard case .number(let number) = v, let n = number.int64, n >= 1, n <= 1 << 30 else {
                throw ABIFailure(MDOC_ERR_INVALID_CONFIGURATION, "each limit must be an integer from 1 to 2^30")
            }
            let i = Int(n)
            switch key {
            case "maxRequestBytes":
                annexC.maxRequestBytes = i
                openID4VP.maxRequestBytes = i
            case "maxDocRequests": annexC.maxDocRequests = i
            case "maxRequestedElements":
                annexC.maxRequestedElements = i
                openID4VP.maxRequestedElements = i
            case "maxAlternativeSetSize": annexC.maxAlternativeSetSize = i
            case "maxNestingDepth": annexC.maxNestingDepth = i
            case "maxDataItems": annexC.maxDataItems = i
            case "maxCredentialQueries": openID4VP.maxCredentialQueries = i
            default: throw ABIFailure(MDOC_ERR_INVALID_CONFIGURATION, "unknown limit (see mdoc_respond.h)")
            }
        }
    }

    private mutating func readTrust(_ value: JSONValue) throws(ABIFailure) {
        func fail(_ d: String) -> ABIFailure { ABIFailure(MDOC_ERR_INVALID_CONFIGURATION, d) }
        guard let members = value.object else { throw fail("trust must be an object") }
        for (key, v) in members {
            switch key {
            case "anchors":
                guard let list = v.array else {
                    throw fail("trust.anchors must be an array of base64 DER certificates")
                }
                var certs = [Certificate]()
                for item in list {
                    guard let s = item.string, let der = Data(base64Encoded: s) else {
                        throw fail("trust.anchors must be an array of base64 DER certificates")
                    }
                    do { certs.append(try Certificate(der: [UInt8](der))) } catch {
                        throw fail("a trust anchor is not a certificate this engine can read")
                    }
                }
                anchors = certs
            case "authorities":
                guard let list = v.array else {
                    throw fail("trust.authorities must be an array of hex key identifiers")
                }
                var akis = [[UInt8]]()
                for item in list {
                    guard let s = item.string, let bytes = Self.hexBytes(s), !bytes.isEmpty else {
                        throw fail("trust.authorities must be an array of hex key identifiers")
                    }
                    akis.append(bytes)
                }
                // An empty allow-list would read as "any authority": never a silent widening.
                guard !akis.isEmpty else {
                    throw fail("trust.authorities must not be empty (omit it to keep the stored policy)")
                }
                authorities = akis
            case "requireReaderAuthentication":
                guard let b = v.bool else { throw fail("trust.requireReaderAuthentication must be true or false") }
                requireReaderAuthentication = b
            case "requireTrustedReader":
                guard let b = v.bool else { throw fail("trust.requireTrustedReader must be true or false") }
                requireTrustedReader = b
            case "signerProfile":
                guard let s = v.string, let p = SignerProfile(rawValue: s) else {
                    throw fail("trust.signerProfile must be mdocReader or requestSigner")
                }
                signerProfile = p
            case "replacePolicy":
                guard let b = v.bool else { throw fail("trust.replacePolicy must be true or false") }
                replacePolicy = b
            default: throw fail("unknown trust member (see mdoc_respond.h)")
            }
        }
    }

    /// The context under the configured trust policy (unchanged when the configuration names none).
    /// Without `replacePolicy` the configuration may only narrow the holder's stored policy: anchors a
    /// subset of the stored anchors, authorities a subset of a stored allow-list, a stored requirement
    /// kept, the signer profile unchanged; anything else is refused (`MDOC_ERR_INVALID_CONFIGURATION`).
    package func applyingTrust(to context: CredentialContext) throws(ABIFailure) -> CredentialContext {
        guard
            anchors != nil || authorities != nil || requireReaderAuthentication != nil || requireTrustedReader != nil
                || signerProfile != nil
        else { return context }
        let stored = context.readerTrust
        if !replacePolicy {
            func widens(_ what: String) -> ABIFailure {
                ABIFailure(
                    MDOC_ERR_INVALID_CONFIGURATION,
                    "trust.\(what) would widen the holder's stored policy (set trust.replacePolicy to replace it)")
            }
            if let anchors {
                let storedDER = Set(stored.trustAnchors.map(\.der))
                guard anchors.allSatisfy({ storedDER.contains($0.der) }) else { throw widens("anchors") }
            }
            if let authorities, case .only(let allowed) = stored.authorities, !allowed.isEmpty {
                guard authorities.allSatisfy({ allowed.contains($0) }) else { throw widens("authorities") }
            }
            if requireReaderAuthentication == false && stored.requireReaderAuthentication {
                throw widens("requireReaderAuthentication")
            }
            if requireTrustedReader == false && stored.requireTrustedReader { throw widens("requireTrustedReader") }
            if let signerProfile, signerProfile != stored.signerProfile { throw widens("signerProfile") }
        }
        var policy = stored
        if let anchors { policy.trustAnchors = anchors }
        if let authorities { policy.authorities = .only(authorities) }
        if let requireReaderAuthentication { policy.requireReaderAuthentication = requireReaderAuthentication }
        if let requireTrustedReader { policy.requireTrustedReader = requireTrustedReader }
        if let signerProfile { policy.signerProfile = signerProfile }
        return context.replacingReaderTrust(policy)
    }

    /// The engine these settings describe over `context`.
    package func engine(over context: CredentialContext) throws(ABIFailure) -> DigitalCredentialsEngine {
        DigitalCredentialsEngine(
            context: try applyingTrust(to: context), annexC: annexC, openID4VP: openID4VP, preference: preference)
    }

    static func parseObject(_ bytes: [UInt8], code: Int32, what: String) throws(ABIFailure) -> [(String, JSONValue)] {
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes, limits: .init(maxBytes: 1 << 20, maxDepth: 8, maxMembers: 4096))
        } catch {
            throw ABIFailure(code, "\(what) is not valid JSON (\(error.what))")
        }
        guard let members = value.object else { throw ABIFailure(code, "\(what) must be a JSON object") }
        return members
    }

    static func hexBytes(_ s: String) -> [UInt8]? {
        let u = Array(s.utf8)
        guard u.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let h = nibble(u[i]), let l = nibble(u[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }
}

/// The holder's answer as the approval JSON of `mdoc_respond.h` gives it.
package struct ABIApproval: Sendable {
    package var approval = Approval.allRequested
    package var using: [Int: String] = [:]
    package var consented: ConsentedRequest?

    /// Reads approval JSON; nil means approve everything shown. Unknown members are refused.
    package init(json: [UInt8]?) throws(ABIFailure) {
        guard let json else { return }
        let root = try ABISettings.parseObject(json, code: MDOC_ERR_INVALID_APPROVAL, what: "approval")
        func fail(_ d: String) -> ABIFailure { ABIFailure(MDOC_ERR_INVALID_APPROVAL, d) }
        func elements(_ v: JSONValue, _ what: String) throws(ABIFailure) -> Set<ElementID> {
            guard let list = v.array else { throw fail("\(what) must be an array of \"namespace/element\" strings") }
            var set = Set<ElementID>()
            for item in list {
                guard let s = item.string, let id = ElementID(parsing: s) else {
                    throw fail("\(what) must be an array of \"namespace/element\" strings")
                }
                set.insert(id)
            }
            return set
        }
        func index(_ key: String) throws(ABIFailure) -> Int {
            guard let i = Int(key), i >= 0, i < 1 << 16, String(i) == key else {
                throw fail("a document index must be a decimal number")
            }
            return i
        }
        for (key, value) in root {
            switch key {
            case "approve":
                if value.string == "all" {
                    approval = .allRequested
                } else if value.array != nil {
                    approval = .elements(try elements(value, "approve"))
                } else if let members = value.object {
                    var map = [Int: Set<ElementID>]()
                    for (k, v) in members { map[try index(k)] = try elements(v, "approve per document") }
                    approval = .perDocument(map)
                } else {
                    throw fail(
                        "approve must be \"all\", an array of elements, or an object of arrays by document index")
                }
            case "using":
                guard let members = value.object else {
                    throw fail("using must be an object of credential ids by document index")
                }
                for (k, v) in members {
                    guard let id = v.string, !id.isEmpty else {
                        throw fail("using must map document indexes to credential ids")
                    }
                    using[try index(k)] = id
                }
            case "consented":
                guard let members = value.object else {
                    throw fail("consented must be an object of element arrays by docType")
                }
                var docs = [String: Set<ElementID>]()
                for (docType, v) in members { docs[docType] = try elements(v, "consented") }
                consented = ConsentedRequest(documents: docs)
            default: throw fail("unknown approval member (see mdoc_respond.h)")
            }
        }
    }
}
