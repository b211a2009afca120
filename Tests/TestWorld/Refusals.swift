import JOSE
import MdocCBOR
import PKCS11
import Presentment
import Testing
import WebEncoding

/// Expects `body` to be refused by `rule` (and so with its code), at `location` when given, recording
/// an issue otherwise: the rule is the contract, never the detail's words.
public func expectRefusal<R: RefusalRule, T>(
    _ rule: R, at location: String? = nil, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) {
    do {
        _ = try body()
        Issue.record(
            "expected a refusal by \(PresentmentError.Rule(rule)), got an answer", sourceLocation: sourceLocation)
    } catch {
        guard let error = error as? PresentmentError else {
            Issue.record("expected \(PresentmentError.Rule(rule)), got \(error)", sourceLocation: sourceLocation)
            return
        }
        if !error.is(rule) || error.code != rule.code || (location.map { $0 != error.location } ?? false) {
            Issue.record(
                "expected \(rule.code.rawValue) [\(PresentmentError.Rule(rule))]\(location.map { " at " + $0 } ?? ""), got \(error)",
                sourceLocation: sourceLocation)
        }
    }
}

/// Expects `body` to be refused with `code`, whatever the rule (for tests about the code itself).
public func expectRefusal<T>(
    _ code: PresentmentError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) {
    do {
        _ = try body()
        Issue.record("expected a refusal (\(code.rawValue)), got an answer", sourceLocation: sourceLocation)
    } catch {
        guard let error = error as? PresentmentError, error.code == code else {
            Issue.record("expected \(code.rawValue), got \(error)", sourceLocation: sourceLocation)
            return
        }
    }
}

/// The refusal `body` throws, or nil when it answers (or throws something else), for tests that check
/// more of a refusal than its rule (its location, its underlying error).
public func refusal<T>(_ body: () throws -> T) -> PresentmentError? {
    do {
        _ = try body()
        return nil
    } catch { return error as? PresentmentError }
}

/// The identity of a lower layer's structured error, as a compact code (never its prose):
/// `json.<code>`, `cbor.<code>@<offset>`, `mdoc.<field>.<code>[@<offset>][/cbor.…|/cose.<code>]`,
/// `cose.<code>`, `jose.<code>`, `pkcs11.<code>`, `untrusted.<reason>`.
public func lowerRule(_ e: (any Error)?) -> String? {
    switch e {
    case let j as JSONValue.ParseError: return "json.\(j.code.rawValue)"
    case let c as CBORError: return "cbor.\(c.code.rawValue)@\(c.offset)"
    case let m as MdocDataError:
        var s = "mdoc.\(m.field).\(m.code.rawValue)" + (m.offset.map { "@\($0)" } ?? "")
        if let c = m.cbor { s += "/" + lowerRule(c)! }
        if let c = m.cose { s += "/" + lowerRule(c)! }
        return s
    case let c as COSEError: return "cose.\(c.code.rawValue)"
    case let j as JOSEError: return "jose.\(j.code.rawValue)"
    case let p as PKCS11Error: return "pkcs11.\(p.code.rawValue)"
    case let r as UntrustedReason: return "untrusted.\(r.rawValue)"
    case nil: return nil
    default: return "\(type(of: e!))"
    }
}

/// What a hostile input must be refused by: the rule (and so the code), where in the request when
/// that is one of several places, and the lower layer's error when one caused it (a prefix of
/// `lowerRule`: `mdoc.DeviceRequest.version.wrongType` matches at any offset).
public struct ExpectedRefusal: Sendable, CustomStringConvertible {
    public let code: PresentmentError.Code
    public let rule: PresentmentError.Rule
    public let location: String?
    public let lower: String?

    public init<R: RefusalRule>(_ rule: R, at location: String? = nil, lower: String? = nil) {
        code = rule.code
        self.rule = PresentmentError.Rule(rule)
        self.location = location
        self.lower = lower
    }

    /// Why `error` is not this refusal, or nil when it is.
    public func mismatch(_ error: PresentmentError) -> String? {
        if error.code != code || error.rule != rule { return "refused by another rule: \(error)" }
        if let location, error.location != location { return "refused at \(error.location ?? "no location"): \(error)" }
        if let lower {
            let actual = lowerRule(error.underlying) ?? "none"
            if !actual.hasPrefix(lower) { return "lower-layer error \(actual), expected \(lower): \(error)" }
        }
        return nil
    }

    public var description: String {
        "\(code.rawValue) [\(rule)]" + (location.map { " at \($0)" } ?? "") + (lower.map { " (\($0))" } ?? "")
    }
}
