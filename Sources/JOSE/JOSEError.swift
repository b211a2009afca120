/// Why a JOSE object or key was refused: a closed code and static text naming the rule (never
/// input content, keys or payloads).
package struct JOSEError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    package enum Code: String, Sendable, Hashable, CaseIterable {
        /// Not a JWS, JWE or JWK of the required shape (segments, base64url, JSON, members).
        case malformed
        /// An algorithm this layer does not implement or refuses (`none`, HMAC, RSA, key wrapping).
        case unsupportedAlgorithm
        /// A key of the wrong type or curve, a point off its curve, or coordinates of the wrong size.
        case invalidKey
        /// A header parameter listed in `crit` (RFC 7515 §4.1.11) that this layer does not understand.
        case unsupportedCritical
        /// The signature does not verify with the given key.
        case signatureInvalid
        /// The JWE could not be decrypted (any cause: one opaque refusal).
        case decryptionFailed
    }

    /// What went wrong.
    package let code: Code
    /// Which structure and rule, as static text.
    package let detail: String

    /// Creates an error.
    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// Equal when the codes are equal (the detail is for people, not for matching).
    package static func == (a: JOSEError, b: JOSEError) -> Bool { a.code == b.code }
    /// Hashes the code.
    package func hash(into h: inout Hasher) { h.combine(code) }

    /// `code: detail`.
    package var description: String { "\(code.rawValue): \(detail)" }
}
