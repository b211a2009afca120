#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR
import Presentment
import WebEncoding

/// A configuration member that is not what `include/mdoc_respond.h` allows: which member and rule, as
/// static text (never the value).
package struct ConfigurationError: Error, Sendable {
    package let detail: String
    package init(_ detail: String) { self.detail = detail }
}

/// The configuration JSON of `include/mdoc_respond.h`, read once for every caller that takes it: the C
/// ABI (and Python through it) and the CLI's `--config`. Each member maps onto one field of
/// `DigitalCredentialsEngine.Configuration`; unknown members are refused, so typos do not pass.
///
/// The `trust` members only narrow the holder's stored policy unless `trust.replacePolicy` is set (a
/// configuration string must not widen what the holder chose): they are applied against the context
/// by `configuration(over:)`.
package struct ConfigurationDocument: Sendable {
    /// Everything but the trust policy.
    package var configuration = DigitalCredentialsEngine.Configuration()
    /// Replacements for the stored reader-trust policy, field by field.
    package var anchors: [Certificate]?
    package var authorities: [[UInt8]]?
    package var requireReaderAuthentication: Bool?
    package var requireTrustedReader: Bool?
    package var signerProfile: SignerProfile?
    /// `trust.replacePolicy`: the trust members replace the stored policy even where they widen it.
    package var replacePolicy = false
    /// Where a snapshot engine finds relative key files (`keyDirectory`; the C ABI's snapshot engines).
    package var keyDirectory: String?
    /// The directories `pkcs11:` keys' modules may be loaded from (`pkcs11ModuleDirectories`); nil: the
    /// system's.
    package var moduleDirectories: [String]?

    package init() {}

    /// Reads configuration JSON; nil means the defaults.
    package init(json: [UInt8]?) throws(ConfigurationError) {
        guard let json else { return }
        let root = try Self.object(json, what: "configuration")
        func bool(_ v: JSONValue, _ name: String) throws(ConfigurationError) -> Bool {
            guard let b = v.bool else { throw ConfigurationError("\(name) must be true or false") }
            return b
        }
        func word<T: RawRepresentable<String>>(_ v: JSONValue, _ name: String, _ words: String)
            throws(ConfigurationError)
            -> T
        {
            guard let s = v.string, let t = T(rawValue: s) else { throw ConfigurationError("\(name) must be \(words)") }
            return t
        }
        for (key, value) in root {
            switch key {
            case "clock":
                guard let s = value.string, let date = MdocDate.parseDateTime(s) else {
                    throw ConfigurationError("clock must be an RFC 3339 date-time like 2026-06-01T00:00:00Z")
                }
                configuration.clock = { date }
            case "protocol": configuration.preference = try word(value, key, "answerable, annexC or openID4VP")
            case "protocols":
                guard let list = value.array, !list.isEmpty else {
                    throw ConfigurationError("protocols must be a non-empty array of annexC and openID4VP")
                }
                var set = Set<PresentationProtocol>()
                for item in list {
                    set.insert(try word(item, "protocols", "a non-empty array of annexC and openID4VP"))
                }
                configuration.protocols = set
            case "missingElements": configuration.annexC.missingElements = try Self.missingElements(value)
            case "selfCheck": configuration.selfCheck = try bool(value, key)
            case "allowAppOrigins": configuration.allowAppOrigins = try bool(value, key)
            case "preferA256GCM": configuration.openID4VP.preferA256GCM = try bool(value, key)
            case "errorDisclosure": configuration.errorDisclosure = try word(value, key, "exact or uniform")
            case "limits": try readLimits(value)
            case "trust": try readTrust(value)
            case "pkcs11ModuleDirectories":
                guard let list = value.array, list.count <= 64,
                    list.allSatisfy({ ($0.string?.hasPrefix("/") ?? false) && !$0.string!.utf8.contains(0) })
                else {
                    throw ConfigurationError("pkcs11ModuleDirectories must be an array of absolute directory paths")
                }
                moduleDirectories = list.map { $0.string! }
            case "keyDirectory":
                guard let s = value.string, !s.isEmpty, !s.utf8.contains(0) else {
                    throw ConfigurationError("keyDirectory must be a non-empty path")
                }
                keyDirectory = s
            default: throw ConfigurationError("unknown configuration member (see mdoc_respond.h)")
            }
        }
    }

    /// `omit` or `report`.
    static func missingElements(_ v: JSONValue) throws(ConfigurationError) -> MissingElementPolicy {
        switch v.string {
        case "omit": .omit
        case "report": .report
        default: throw ConfigurationError("missingElements must be omit or report")
        }
    }

    private mutating func readLimits(_ value: JSONValue) throws(ConfigurationError) {
        guard let members = value.object else { throw ConfigurationError("limits must be an object") }
        for (key, v) in members {
            guard case .number(let number) = v, let n = number.int64, n >= 1, n <= 1 << 30 else {
                throw ConfigurationError("each limit must be an integer from 1 to 2^30")
            }
            let i = Int(n)
            switch key {
            case "maxRequestBytes": configuration.limits.maxRequestBytes = i
            // maxDocRequests and maxCredentialQueries are the names of maxDocuments before the limits were one.
            case "maxDocuments", "maxDocRequests", "maxCredentialQueries": configuration.limits.maxDocuments = i
            case "maxRequestedElements": configuration.limits.maxRequestedElements = i
            case "maxAlternativeSetSize": configuration.annexC.maxAlternativeSetSize = i
            case "maxNestingDepth": configuration.annexC.maxNestingDepth = i
            case "maxDataItems": configuration.annexC.maxDataItems = i
            default: throw ConfigurationError("unknown limit (see mdoc_respond.h)")
            }
        }
    }

    private mutating func readTrust(_ value: JSONValue) throws(ConfigurationError) {
        guard let members = value.object else { throw ConfigurationError("trust must be an object") }
        for (key, v) in members {
            switch key {
            case "anchors":
                let what = "trust.anchors must be an array of base64 DER certificates"
                guard let list = v.array else { throw ConfigurationError(what) }
                var certs = [Certificate]()
                for item in list {
                    guard let s = item.string, let der = Data(base64Encoded: s) else { throw ConfigurationError(what) }
                    do { certs.append(try Certificate(der: [UInt8](der))) } catch {
                        throw ConfigurationError("a trust anchor is not a certificate this engine can read")
                    }
                }
                anchors = certs
            case "authorities":
                let what = "trust.authorities must be an array of hex key identifiers"
                guard let list = v.array else { throw ConfigurationError(what) }
                var akis = [[UInt8]]()
                for item in list {
                    guard let s = item.string, let bytes = Self.hexBytes(s), !bytes.isEmpty else {
                        throw ConfigurationError(what)
                    }
                    akis.append(bytes)
                }
                // An empty allow-list would read as "any authority": never a silent widening.
                guard !akis.isEmpty else {
                    throw ConfigurationError("trust.authorities must not be empty (omit it to keep the stored policy)")
                }
                authorities = akis
            case "requireReaderAuthentication":
                guard let b = v.bool else {
                    throw ConfigurationError("trust.requireReaderAuthentication must be true or false")
                }
                requireReaderAuthentication = b
            case "requireTrustedReader":
                guard let b = v.bool else {
                    throw ConfigurationError("trust.requireTrustedReader must be true or false")
                }
                requireTrustedReader = b
            case "signerProfile":
                guard let s = v.string, let p = SignerProfile(rawValue: s) else {
                    throw ConfigurationError("trust.signerProfile must be mdocReader or requestSigner")
                }
                signerProfile = p
            case "replacePolicy":
                guard let b = v.bool else { throw ConfigurationError("trust.replacePolicy must be true or false") }
                replacePolicy = b
            default: throw ConfigurationError("unknown trust member (see mdoc_respond.h)")
            }
        }
    }

    /// The configuration for an engine over `context`: the trust members applied to the context's
    /// stored policy (unchanged when the JSON names none). Without `replacePolicy` they may only narrow
    /// it: anchors a subset of the stored anchors, authorities a subset of a stored allow-list, a stored
    /// requirement kept, the signer profile unchanged; anything else is refused.
    package func configuration(over context: CredentialContext) throws(ConfigurationError)
        -> DigitalCredentialsEngine.Configuration
    {
        guard
            anchors != nil || authorities != nil || requireReaderAuthentication != nil || requireTrustedReader != nil
                || signerProfile != nil
        else { return configuration }
        let stored = configuration.readerTrust ?? context.readerTrust
        if !replacePolicy {
            func widens(_ what: String) -> ConfigurationError {
                ConfigurationError(
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
        var out = configuration
        out.readerTrust = policy
        return out
    }

    /// A JSON object of at most 1 MiB, 8 deep.
    package static func object(_ bytes: [UInt8], what: String) throws(ConfigurationError) -> [(String, JSONValue)] {
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes, limits: .init(maxBytes: 1 << 20, maxDepth: 8, maxMembers: 4096))
        } catch {
            throw ConfigurationError("\(what) is not valid JSON (\(error.what))")
        }
        guard let members = value.object else { throw ConfigurationError("\(what) must be a JSON object") }
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
