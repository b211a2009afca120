/// A CBOR decoding or structure error. It carries a code and the byte offset where the problem was
/// found, never any content from the input.
public struct CBORError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The input ends inside a head, a string, or before a container or tag is complete
        /// (RFC 8949 Appendix F error kind 2).
        case truncated
        /// A reserved additional-information value (28–30) or an initial byte that is never valid.
        case malformedHead
        /// Indefinite length on a major type that does not allow it (integers, tags), or a two-byte
        /// simple value below 32.
        case invalidIndefiniteLength
        /// A "break" stop code outside an indefinite-length container or string.
        case unexpectedBreak
        /// A chunk of an indefinite-length string that is not a definite string of the same type.
        case invalidChunk
        /// An indefinite-length map closed after a key with no value.
        case incompleteMap
        /// A text string is not valid UTF-8.
        case invalidUTF8
        /// A map holds the same key twice.
        case duplicateMapKey
        /// Bytes remain after the single top-level item.
        case trailingBytes
        /// The nesting depth limit was exceeded.
        case depthLimitExceeded
        /// The total item count limit was exceeded.
        case itemLimitExceeded
        /// The input is larger than the configured maximum.
        case inputTooLarge
        /// A declared length or element count is larger than the bytes that remain.
        case lengthExceedsInput
        /// An encoding is not the preferred (shortest, definite) one while preferred encoding is required.
        case nonPreferredEncoding
        /// Tag 24 (encoded CBOR data item) does not enclose a byte string.
        case invalidTagContent
        /// An item has a different type than the structure requires.
        case typeMismatch
        /// An integer does not fit the requested Swift type.
        case integerOverflow
    }

    /// What went wrong.
    public let code: Code
    /// Byte offset into the decoded buffer at which the error was detected.
    public let offset: Int

    /// Creates an error.
    public init(_ code: Code, at offset: Int) {
        self.code = code
        self.offset = offset
    }

    /// A one-line description: the code and the offset, never input content.
    public var description: String { "CBOR \(code.rawValue) at byte \(offset)" }
}

/// Limits and strictness settings for decoding untrusted CBOR.
public struct CBORDecodingOptions: Sendable, Hashable {
    /// Maximum nesting depth of arrays, maps, tags and indefinite strings (default 64; mdoc needs < 16).
    public var maxDepth: Int
    /// Maximum number of data items in one document (default 1 048 576).
    public var maxItems: Int
    /// Maximum input size in bytes (default 16 MiB; never more than 4 GiB − 1).
    public var maxInputSize: Int
    /// Reject maps that contain the same key twice (default true).
    public var rejectDuplicateKeys: Bool
    /// Require preferred serialization: shortest heads, definite lengths (default false).
    public var requirePreferredEncoding: Bool
    /// Require the content of tag 24 to be a byte string (default true).
    public var checkTag24Content: Bool

    /// Creates options; every parameter has a safe default.
    public init(
        maxDepth: Int = 64, maxItems: Int = 1 << 20, maxInputSize: Int = 16 << 20,
        rejectDuplicateKeys: Bool = true, requirePreferredEncoding: Bool = false,
        checkTag24Content: Bool = true
    ) {
        self.maxDepth = maxDepth
        self.maxItems = maxItems
        self.maxInputSize = min(maxInputSize, Int(UInt32.max) - 1)
        self.rejectDuplicateKeys = rejectDuplicateKeys
        self.requirePreferredEncoding = requirePreferredEncoding
        self.checkTag24Content = checkTag24Content
    }

    /// The defaults.
    public static let `default` = CBORDecodingOptions()
}
