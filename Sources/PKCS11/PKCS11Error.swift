/// An error from the PKCS#11 layer: a closed `code`, a static `detail` naming the rule or the step,
/// and the module's return value when one caused it. Never a PIN, a PIN source or a URI.
public struct PKCS11Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The `pkcs11:` URI is malformed, repeats an attribute, carries a PIN value or an attribute
        /// this implementation does not support.
        case invalidURI
        /// The module file is missing, not a regular file, writable by others, or cannot be loaded.
        case moduleUnavailable
        /// The file loads but is not a PKCS#11 module (no `C_GetFunctionList`, an incomplete function
        /// list, or a Cryptoki major version other than 2 or 3).
        case notAModule
        /// `C_Initialize` or another library-level call failed.
        case moduleFailed
        /// No slot holds a token matching the URI, or the token went away.
        case tokenAbsent
        /// The token needs a PIN and none could be read from the configured source.
        case pinUnavailable
        /// The token refused the PIN.
        case pinIncorrect
        /// The token's user PIN is locked (too many wrong attempts) or expired.
        case pinLocked
        /// No private key object matches the URI.
        case keyNotFound
        /// More than one private key object matches the URI.
        case keyAmbiguous
        /// The key is not an EC signing key on P-256, P-384 or P-521, or its public half is missing or
        /// not a valid point.
        case keyUnsuitable
        /// The private key does not sign for the public key the token holds beside it.
        case keyMismatch
        /// The token failed during an operation (device error, memory, a malformed answer).
        case tokenFailed
    }

    /// What went wrong.
    public let code: Code
    /// The rule or the step (static text).
    public let detail: String
    /// The module's return value (`CK_RV`) that caused it, when one did.
    public let returnValue: UInt?

    /// Creates an error.
    public init(_ code: Code, _ detail: String, returnValue: UInt? = nil) {
        self.code = code
        self.detail = detail
        self.returnValue = returnValue
    }

    /// One line: the code, the rule, the return value's name.
    public var description: String {
        var s = "PKCS#11 \(code.rawValue): \(detail)"
        if let returnValue { s += " (\(PKCS11Module.returnValueName(returnValue)))" }
        return s
    }

    /// The detail with the return value's name, for wrapping into another layer's error.
    public var message: String {
        returnValue.map { "\(detail) (\(PKCS11Module.returnValueName($0)))" } ?? detail
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws `PKCS11Error`.
    func withPKCS11Bytes<R>(_ body: (UnsafeRawBufferPointer) throws(PKCS11Error) -> R) throws(PKCS11Error) -> R {
        try withUnsafeBytes { p in Result { () throws(PKCS11Error) in try body(p) } }.get()
    }
}
