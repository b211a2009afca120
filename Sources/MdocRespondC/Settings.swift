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

/// An engine's settings as the configuration JSON of `mdoc_respond.h` gives them (read by the facade's
/// one reader, `ConfigurationDocument`, the CLI's `--config` too).
package struct ABISettings: Sendable {
    package let document: ConfigurationDocument

    /// Reads configuration JSON; nil means the defaults. Unknown members are refused.
    package init(json: [UInt8]?) throws(ABIFailure) {
        do { document = try ConfigurationDocument(json: json) } catch {
            throw ABIFailure(MDOC_ERR_INVALID_CONFIGURATION, error.detail)
        }
    }

    /// The directories `pkcs11:` keys' modules may be loaded from.
    package var moduleDirectories: [String] { document.moduleDirectories ?? PKCS11ModuleDirectories.system }
    /// Where a snapshot engine finds relative key files.
    package var keyDirectory: String? { document.keyDirectory }
    /// The largest request the engine accepts (checked before the request is read).
    package var maxRequestBytes: Int { document.configuration.limits.maxRequestBytes }

    /// The engine these settings describe over `source` (the trust members narrow the stored policy
    /// as first read).
    package func engine(over source: ContextSource, observer: (any EngineObserver)? = nil) throws(ABIFailure)
        -> DigitalCredentialsEngine
    {
        do {
            var configuration = try document.configuration(over: source.initial)
            configuration.observer = observer
            return DigitalCredentialsEngine(source: source, configuration: configuration)
        } catch { throw ABIFailure(MDOC_ERR_INVALID_CONFIGURATION, error.detail) }
    }
}

/// The holder's answer as the approval JSON of `mdoc_respond.h` gives it.
package struct ABIApproval: Sendable {
    package var approval = Approval.allRequested
    package var using: [Int: String] = [:]
    package var consented: ConsentedRequest?
    /// Documents whose proof request the holder agreed to answer with a plain presentation.
    package var plainFallback: Set<Int> = []

    /// Reads approval JSON; nil means approve everything shown. Unknown members are refused.
    package init(json: [UInt8]?) throws(ABIFailure) {
        guard let json else { return }
        let root: [(String, JSONValue)]
        do { root = try ConfigurationDocument.object(json, what: "approval") } catch {
            throw ABIFailure(MDOC_ERR_INVALID_APPROVAL, error.detail)
        }
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
            case "plainFallback":
                guard let list = value.array else {
                    throw fail("plainFallback must be an array of document indexes")
                }
                for item in list {
                    guard case .number(let n) = item, let i = n.int64, i >= 0, i < 1 << 16 else {
                        throw fail("plainFallback must be an array of document indexes")
                    }
                    plainFallback.insert(Int(i))
                }
            default: throw fail("unknown approval member (see mdoc_respond.h)")
            }
        }
    }
}
