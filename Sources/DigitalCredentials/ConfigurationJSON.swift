#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Longfellow
import MdocCBOR
import Presentment
import WebEncoding

/// A configuration document refused: the rule it broke and the member (a fixed name from
/// `include/mdoc_respond.h` such as `limits.maxDocuments`, never text from the input).
package struct ConfigurationError: Error, Sendable, Hashable {
    /// The rules of configuration JSON; `summary` words each.
    package enum Rule: String, Sendable, Hashable, CaseIterable {
        case notJSON, notObject, unknownMember, notBoolean, notOneOf, notDate, outOfRange, notList, notCertificate
        case notKeyIdentifier, emptyAllowList, notPath, widensPolicy, notApplicable, testingOnly

        /// What the rule requires, in words.
        package var summary: String {
            switch self {
            case .notJSON: "must be valid JSON within the size, depth and member bounds"
            case .notObject: "must be a JSON object"
            case .unknownMember: "is not a member this version knows (see mdoc_respond.h)"
            case .notBoolean: "must be true or false"
            case .notOneOf: "must be one of the words mdoc_respond.h lists"
            case .notDate: "must be an RFC 3339 date-time like 2026-06-01T00:00:00Z"
            case .outOfRange: "must be an integer from 1 to 2^30"
            case .notList: "must be a non-empty array of the form mdoc_respond.h lists"
            case .notCertificate: "must be base64 DER certificates this engine can read"
            case .notKeyIdentifier: "must be hex key identifiers"
            case .emptyAllowList: "must not be empty (omit it to keep the stored policy)"
            case .notPath: "must be absolute, non-empty paths"
            case .widensPolicy: "would widen the holder's stored policy (set trust.replacePolicy to replace it)"
            case .notApplicable: "does not apply here (keyDirectory: snapshot engines only; the CLI takes --context)"
            case .testingOnly:
                "fixes the engine's time, which makes credentials outside their validity presentable: set \"testing\": true (or trust.replacePolicy) to allow it"
            }
        }
    }

    /// The rule broken.
    package let rule: Rule
    /// The member, by its fixed name; an unknown member by the name given when it is a plain
    /// identifier (`trust.requireTrustedReadr`), else its enclosing object's and a placeholder.
    package let member: String

    /// The document: `configuration`, or `approval` for the C ABI's approval JSON (read by the same
    /// bounded reader).
    package let document: String

    package init(_ rule: Rule, _ member: String, document: String = "configuration") {
        self.rule = rule
        self.member = member
        self.document = document
    }

    /// `<document>.<rule>: <member> <summary>` (what the C ABI and the CLI report).
    package var detail: String { "\(document).\(rule.rawValue): \(member) \(rule.summary)" }
}

/// The configuration JSON of `include/mdoc_respond.h`, read once for every caller that takes it: the C
/// ABI (and Python through it) and the CLI's `--config`. Each member maps onto one field of
/// `DigitalCredentialsEngine.Configuration`; unknown members are refused, so typos do not pass.
///
/// The `trust` members only narrow the holder's stored policy unless `trust.replacePolicy` is set (a
/// configuration string must not widen what the holder chose): they are applied against the context
/// by `configuration(over:)`.
package struct ConfigurationDocument: Sendable {
    /// Everything but the trust policy. (Its zero-knowledge settings are set once, from the members
    /// read: looking for the prover's library is a file-system probe.)
    package var configuration = DigitalCredentialsEngine.Configuration(EngineConfiguration(zeroKnowledge: .init()))
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
    /// `zeroKnowledge`: where the Longfellow prover is (nil: the default installation), whether proofs
    /// are made at all, and their limits.
    package var zkDirectory: String?
    package var zkEnabled = true
    package var zkMaxConcurrentProofs = 1
    package var zkTimeLimit = 60.0

    package init() { configuration.zeroKnowledge = zeroKnowledge(directory: nil) }

    /// An unknown member as an error names it: `parent.name` when the name is a plain identifier (1 to
    /// 64 of `[A-Za-z0-9_-]`: the operator's own typo, shown so it can be fixed), else the parent and
    /// a placeholder (text that could be anything is never echoed).
    static func unknown(_ key: String, in parent: String?) -> String {
        let plain =
            (1...64).contains(key.utf8.count)
            && key.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x5f
                    || b == 0x2d
            }
        let name = plain ? key : "(a member whose name is not a plain identifier)"
        return parent.map { $0 + "." + name } ?? name
    }

    /// Reads configuration JSON; nil means the defaults.
    package init(json: [UInt8]?) throws(ConfigurationError) {
        guard let json else {
            configuration.zeroKnowledge = zeroKnowledge(directory: nil)
            return
        }
        let root = try Self.object(json, what: "configuration")
        func bool(_ v: JSONValue, _ name: String) throws(ConfigurationError) -> Bool {
            guard let b = v.bool else { throw ConfigurationError(.notBoolean, name) }
            return b
        }
        func word<T: RawRepresentable<String>>(_ v: JSONValue, _ name: String) throws(ConfigurationError) -> T {
            guard let s = v.string, let t = T(rawValue: s) else { throw ConfigurationError(.notOneOf, name) }
            return t
        }
        var fixedClock = false
        var testing = false
        for (key, value) in root {
            switch key {
            case "clock":
                guard let s = value.string, let date = MdocDate.parseDateTime(s) else {
                    throw ConfigurationError(.notDate, key)
                }
                configuration.clock = { date }
                configuration.clockFixedForTesting = true
                fixedClock = true
            case "testing": testing = try bool(value, key)
            case "protocol": configuration.preference = try word(value, key)
            case "protocols":
                guard let list = value.array, !list.isEmpty else { throw ConfigurationError(.notList, key) }
                var set = Set<PresentationProtocol>()
                for item in list {
                    set.insert(try word(item, "protocols"))
                }
                configuration.protocols = set
            case "missingElements": configuration.annexC.missingElements = try Self.missingElements(value)
            case "selfCheck": configuration.selfCheck = try bool(value, key)
            case "allowAppOrigins": configuration.allowAppOrigins = try bool(value, key)
            case "preferA256GCM": configuration.openID4VP.preferA256GCM = try bool(value, key)
            case "errorDisclosure": configuration.errorDisclosure = try word(value, key)
            case "limits": try readLimits(value)
            case "trust": try readTrust(value)
            case "pkcs11ModuleDirectories":
                guard let list = value.array, list.count <= 64,
                    list.allSatisfy({ ($0.string?.hasPrefix("/") ?? false) && !$0.string!.utf8.contains(0) })
                else {
                    throw ConfigurationError(.notPath, key)
                }
                moduleDirectories = list.map { $0.string! }
            case "zeroKnowledge": try readZeroKnowledge(value)
            case "keyDirectory":
                guard let s = value.string, !s.isEmpty, !s.utf8.contains(0) else {
                    throw ConfigurationError(.notPath, key)
                }
                keyDirectory = s
            default: throw ConfigurationError(.unknownMember, Self.unknown(key, in: nil))
            }
        }
        // Time is not configuration: a fixed clock only in a configuration that says it is for testing.
        if fixedClock && !testing && !replacePolicy { throw ConfigurationError(.testingOnly, "clock") }
        configuration.zeroKnowledge = zeroKnowledge(directory: zkDirectory)
    }

    /// The zero-knowledge settings these members describe, with the prover installed at `directory`
    /// (nil: the default installation).
    package func zeroKnowledge(directory: String?) -> ZeroKnowledgeSettings {
        guard zkEnabled else {
            return ZeroKnowledgeSettings(maxProofsPerResponse: configuration.zeroKnowledge.maxProofsPerResponse)
        }
        return .longfellow(
            directory.map(LongfellowInstallation.init(directory:)) ?? .default,
            maxConcurrentProofs: zkMaxConcurrentProofs,
            timeLimit: zkTimeLimit, maxProofsPerResponse: configuration.zeroKnowledge.maxProofsPerResponse)
    }

    private mutating func readZeroKnowledge(_ value: JSONValue) throws(ConfigurationError) {
        guard let members = value.object else { throw ConfigurationError(.notObject, "zeroKnowledge") }
        for (key, v) in members {
            func count(_ name: String, max: Int64) throws(ConfigurationError) -> Int {
                guard case .number(let number) = v, let n = number.int64, n >= 1, n <= max else {
                    throw ConfigurationError(.outOfRange, "zeroKnowledge." + name)
                }
                return Int(n)
            }
            switch key {
            case "directory":
                guard let s = v.string, s.hasPrefix("/"), !s.utf8.contains(0) else {
                    throw ConfigurationError(.notPath, "zeroKnowledge.directory")
                }
                zkDirectory = s
            case "enabled":
                guard let b = v.bool else { throw ConfigurationError(.notBoolean, "zeroKnowledge.enabled") }
                zkEnabled = b
            case "maxConcurrentProofs": zkMaxConcurrentProofs = try count(key, max: 64)
            case "maxProofsPerResponse": configuration.zeroKnowledge.maxProofsPerResponse = try count(key, max: 16)
            case "proofTimeLimit": zkTimeLimit = Double(try count(key, max: 3600))
            default: throw ConfigurationError(.unknownMember, Self.unknown(key, in: "zeroKnowledge"))
            }
        }
    }

    /// The limits `limits` may name (`maxDocRequests` and `maxCredentialQueries` are `maxDocuments`'
    /// names from before the limits were one).
    static let limitNames: Set<String> = [
        "maxRequestBytes", "maxDocuments", "maxDocRequests", "maxCredentialQueries", "maxRequestedElements",
        "maxAlternativeSetSize", "maxNestingDepth", "maxDataItems",
    ]

    /// `omit` or `report`.
    static func missingElements(_ v: JSONValue) throws(ConfigurationError) -> MissingElementPolicy {
        switch v.string {
        case "omit": .omit
        case "report": .report
        default: throw ConfigurationError(.notOneOf, "missingElements")
        }
    }

    private mutating func readLimits(_ value: JSONValue) throws(ConfigurationError) {
        guard let members = value.object else { throw ConfigurationError(.notObject, "limits") }
        for (key, v) in members {
            guard Self.limitNames.contains(key) else {
                throw ConfigurationError(.unknownMember, Self.unknown(key, in: "limits"))
            }
            guard case .number(let number) = v, let n = number.int64, n >= 1, n <= 1 << 30 else {
                throw ConfigurationError(.outOfRange, "limits." + key)
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
            default: throw ConfigurationError(.unknownMember, Self.unknown(key, in: "limits"))
            }
        }
    }

    private mutating func readTrust(_ value: JSONValue) throws(ConfigurationError) {
        guard let members = value.object else { throw ConfigurationError(.notObject, "trust") }
        for (key, v) in members {
            switch key {
            case "anchors":
                guard let list = v.array else { throw ConfigurationError(.notList, "trust.anchors") }
                var certs = [Certificate]()
                for item in list {
                    guard let s = item.string, let der = Data(base64Encoded: s) else {
                        throw ConfigurationError(.notCertificate, "trust.anchors")
                    }
                    do { certs.append(try Certificate(der: [UInt8](der))) } catch {
                        throw ConfigurationError(.notCertificate, "trust.anchors")
                    }
                }
                anchors = certs
            case "authorities":
                guard let list = v.array else { throw ConfigurationError(.notList, "trust.authorities") }
                var akis = [[UInt8]]()
                for item in list {
                    guard let s = item.string, let bytes = Self.hexBytes(s), !bytes.isEmpty else {
                        throw ConfigurationError(.notKeyIdentifier, "trust.authorities")
                    }
                    akis.append(bytes)
                }
                // An empty allow-list would read as "any authority": never a silent widening.
                guard !akis.isEmpty else { throw ConfigurationError(.emptyAllowList, "trust.authorities") }
                authorities = akis
            case "requireReaderAuthentication":
                guard let b = v.bool else { throw ConfigurationError(.notBoolean, "trust.requireReaderAuthentication") }
                requireReaderAuthentication = b
            case "requireTrustedReader":
                guard let b = v.bool else { throw ConfigurationError(.notBoolean, "trust.requireTrustedReader") }
                requireTrustedReader = b
            case "signerProfile":
                guard let s = v.string, let p = SignerProfile(rawValue: s) else {
                    throw ConfigurationError(.notOneOf, "trust.signerProfile")
                }
                signerProfile = p
            case "replacePolicy":
                guard let b = v.bool else { throw ConfigurationError(.notBoolean, "trust.replacePolicy") }
                replacePolicy = b
            default: throw ConfigurationError(.unknownMember, Self.unknown(key, in: "trust"))
            }
        }
    }

    /// The configuration for an engine over `context`: the trust members applied to the context's
    /// stored policy (unchanged when the JSON names none). Without `replacePolicy` they may only narrow
    /// it: anchors a subset of the stored anchors (each keeping its stored purpose), authorities a
    /// subset of a stored allow-list, a stored requirement kept, the signer profile unchanged; anything
    /// else is refused. Narrowing is applied again to the store's policy as it is at each call
    /// (`EngineConfiguration.readerTrustOverStore`): an engine over a directory never trusts more than
    /// the store does now, and refuses every call while its members would widen it.
    package func configuration(over context: CredentialContext) throws(ConfigurationError)
        -> DigitalCredentialsEngine.Configuration
    {
        guard
            anchors != nil || authorities != nil || requireReaderAuthentication != nil || requireTrustedReader != nil
                || signerProfile != nil
        else { return configuration }
        var out = configuration
        if replacePolicy || configuration.readerTrust != nil {
            out.readerTrust = try policy(over: configuration.readerTrust ?? context.readerTrust)
            return out
        }
        _ = try policy(over: context.readerTrust)  // refused now when it widens the policy as stored now
        let members = self
        out.shared.readerTrustOverStore = { (stored) throws(PresentmentError) -> ReaderTrustPolicy in
            do { return try members.policy(over: stored) } catch {
                throw PresentmentError(ContextRule.configurationWidensStore)
            }
        }
        return out
    }

    /// The trust members applied to `stored` (checked to narrow it unless `replacePolicy`).
    func policy(over stored: ReaderTrustPolicy) throws(ConfigurationError) -> ReaderTrustPolicy {
        if !replacePolicy {
            func widens(_ what: String) -> ConfigurationError { ConfigurationError(.widensPolicy, "trust." + what) }
            if let anchors {
                let storedDER = Set(stored.anchors.der)
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
        if let anchors {
            // Each named anchor keeps the purpose the holder stored with it (a narrowing never widens what
            // a signer under it must be).
            let der = anchors.map(\.der)
            let purposes = der.map { d in stored.anchors.der.firstIndex(of: d).flatMap { stored.anchors.purposes[$0] } }
            policy.anchors = TrustAnchors(der: der, purposes: purposes)
        }
        if let authorities { policy.authorities = .only(authorities) }
        if let requireReaderAuthentication { policy.requireReaderAuthentication = requireReaderAuthentication }
        if let requireTrustedReader { policy.requireTrustedReader = requireTrustedReader }
        if let signerProfile { policy.signerProfile = signerProfile }
        return policy
    }

    /// A JSON object of at most 1 MiB, 8 deep.
    package static func object(_ bytes: [UInt8], what: String) throws(ConfigurationError) -> [(String, JSONValue)] {
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes, limits: .init(maxBytes: 1 << 20, maxDepth: 8, maxMembers: 4096))
        } catch {
            throw ConfigurationError(.notJSON, what, document: what)
        }
        guard let members = value.object else { throw ConfigurationError(.notObject, what, document: what) }
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
