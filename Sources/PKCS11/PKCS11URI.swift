/// Where a token's user PIN comes from: a file or an environment variable, never the URI or the
/// context itself. The PIN is read for each login and cleansed after it.
public enum PINSource: Sendable, Hashable {
    /// A file holding the PIN (one trailing newline is ignored). It must be a regular file owned by
    /// this user and readable by no one else (mode 0600 or 0400), at most 256 bytes.
    case file(String)
    /// An environment variable holding the PIN (name: `[A-Za-z_][A-Za-z0-9_]*`, at most 128 bytes).
    case environment(String)
}

/// A `pkcs11:` URI (RFC 7512) naming a device key in a token, with the module to load and where its
/// PIN comes from.
///
/// Path attributes: `token`, `manufacturer`, `serial`, `model` (the token), `slot-id`,
/// `slot-description`, `slot-manufacturer` (the slot), `library-manufacturer`,
/// `library-description`, `library-version` (the module), `object` (the key's `CKA_LABEL`), `id`
/// (its `CKA_ID`, percent-encoded bytes) and `type` (`private`, the default, is the only one a device
/// key may name). Query attributes: `module-path` (required: an absolute path), `pin-source` (a file:
/// `file:/path`, `file:///path` or `/path`) and the vendor attribute `x-pin-env` (an environment
/// variable's name). `pin-value` is refused (a PIN is never stored in a context), as are
/// `module-name`, a `pin-source` that runs a command, an attribute given twice and any attribute not
/// listed here (an attribute that is not understood could narrow the match in a way we would ignore).
public struct PKCS11URI: Sendable, Hashable, CustomStringConvertible {
    /// The longest URI accepted.
    public static let maxLength = 4096

    /// Token label (`CKA_LABEL` of the token, `CK_TOKEN_INFO.label`).
    public var token: String?
    /// Token manufacturer, model and serial number.
    public var manufacturer: String?
    public var model: String?
    public var serial: String?
    /// Slot id, description and manufacturer.
    public var slotID: UInt?
    public var slotDescription: String?
    public var slotManufacturer: String?
    /// Library manufacturer, description and version (`M` or `M.N`).
    public var libraryManufacturer: String?
    public var libraryDescription: String?
    public var libraryVersion: String?
    /// The key object's label (`CKA_LABEL`).
    public var object: String?
    /// The key object's id (`CKA_ID`).
    public var id: [UInt8]?
    /// The module to load.
    public var modulePath: String?
    /// Where the PIN comes from (nil: the token needs no PIN or has its own PIN pad).
    public var pinSource: PINSource?

    /// Creates a URI from its parts.
    public init(
        token: String? = nil, object: String? = nil, id: [UInt8]? = nil, modulePath: String? = nil,
        pinSource: PINSource? = nil
    ) {
        self.token = token
        self.object = object
        self.id = id
        self.modulePath = modulePath
        self.pinSource = pinSource
    }

    /// Whether `reference` is meant as a PKCS#11 URI (its scheme is `pkcs11:`, in any case).
    public static func isPKCS11(_ reference: String) -> Bool {
        reference.utf8.count >= 7 && reference.utf8.prefix(7).map { $0 | 0x20 } == Array("pkcs11:".utf8)
    }

    /// Parses a `pkcs11:` URI naming a private key.
    public init(parsing text: String) throws(PKCS11Error) {
        guard text.utf8.count <= Self.maxLength else {
            throw PKCS11Error(.invalidURI, "the URI is longer than \(Self.maxLength) bytes")
        }
        guard Self.isPKCS11(text) else { throw PKCS11Error(.invalidURI, "the URI does not start with pkcs11:") }
        let body = Array(text.utf8.dropFirst(7))
        let q = body.firstIndex(of: UInt8(ascii: "?"))
        let pathPart = Array(body[..<(q ?? body.count)])
        let queryPart = q.map { Array(body[($0 + 1)...]) } ?? []
        var seen = Set<String>()
        var type: String?
        for attribute in pathPart.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false) {
            if attribute.isEmpty && pathPart.isEmpty { break }
            let (name, raw) = try Self.split(attribute)
            guard seen.insert(name).inserted else {
                throw PKCS11Error(.invalidURI, "a path attribute appears twice")
            }
            if name == "id" {
                let bytes = try Self.decode(raw, allowed: Self.pathCharacters)
                guard !bytes.isEmpty, bytes.count <= 256 else {
                    throw PKCS11Error(.invalidURI, "id must be 1-256 bytes")
                }
                id = bytes
                continue
            }
            let value = try Self.text(raw, allowed: Self.pathCharacters)
            switch name {
            case "token": token = value
            case "manufacturer": manufacturer = value
            case "model": model = value
            case "serial": serial = value
            case "slot-description": slotDescription = value
            case "slot-manufacturer": slotManufacturer = value
            case "library-manufacturer": libraryManufacturer = value
            case "library-description": libraryDescription = value
            case "library-version":
                let parts = value.split(separator: ".", omittingEmptySubsequences: false)
                guard (1...2).contains(parts.count),
                    parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && UInt8($0) != nil })
                else { throw PKCS11Error(.invalidURI, "library-version must be M or M.N") }
                libraryVersion = parts.count == 1 ? value + ".0" : value
            case "slot-id":
                guard value.utf8.count <= 20, let n = UInt(value), String(n) == value else {
                    throw PKCS11Error(.invalidURI, "slot-id must be a decimal number")
                }
                slotID = n
            case "object": object = value
            case "type": type = value
            default:
                throw PKCS11Error(.invalidURI, "the URI has a path attribute this implementation does not support")
            }
        }
        guard type == nil || type == "private" else {
            throw PKCS11Error(.invalidURI, "a device key URI must name a private key (type=private)")
        }
        guard object != nil || id != nil else {
            throw PKCS11Error(.invalidURI, "the URI names no key object (object= or id=)")
        }
        if !queryPart.isEmpty {
            for attribute in queryPart.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
                let (name, raw) = try Self.split(attribute)
                guard seen.insert("?" + name).inserted else {
                    throw PKCS11Error(.invalidURI, "a query attribute appears twice")
                }
                switch name {
                case "pin-value":
                    throw PKCS11Error(
                        .invalidURI, "the URI carries a PIN value; name a pin-source file or x-pin-env variable instead"
                    )
                case "module-name":
                    throw PKCS11Error(.invalidURI, "module-name is not supported; give module-path")
                case "module-path":
                    let v = try Self.text(raw, allowed: Self.queryCharacters)
                    guard v.hasPrefix("/") else { throw PKCS11Error(.invalidURI, "module-path must be absolute") }
                    modulePath = v
                case "pin-source":
                    var v = try Self.text(raw, allowed: Self.queryCharacters)
                    if v.hasPrefix("file://") {
                        v.removeFirst(7)
                    } else if v.hasPrefix("file:") {
                        v.removeFirst(5)
                    }
                    guard v.hasPrefix("/") else {
                        throw PKCS11Error(.invalidURI, "pin-source must name a file by its absolute path")
                    }
                    pinSource = .file(v)
                case "x-pin-env":
                    let v = try Self.text(raw, allowed: Self.queryCharacters)
                    guard Self.isEnvironmentName(v) else {
                        throw PKCS11Error(.invalidURI, "x-pin-env must be an environment variable name")
                    }
                    pinSource = .environment(v)
                default:
                    throw PKCS11Error(.invalidURI, "the URI has a query attribute this implementation does not support")
                }
            }
            guard !(seen.contains("?pin-source") && seen.contains("?x-pin-env")) else {
                throw PKCS11Error(.invalidURI, "pin-source and x-pin-env are exclusive")
            }
        }
    }

    /// Whether `name` is an acceptable environment variable name.
    public static func isEnvironmentName(_ name: String) -> Bool {
        let b = Array(name.utf8)
        guard (1...128).contains(b.count), !(b[0] >= 0x30 && b[0] <= 0x39) else { return false }
        return b.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x5F }
    }

    /// The URI without its query (no module path, no PIN source): what names the key itself.
    public var keyOnly: PKCS11URI {
        var u = self
        u.modulePath = nil
        u.pinSource = nil
        return u
    }

    /// The URI, every value percent-encoded where needed, attributes in a fixed order.
    public var string: String { serialized(redactingPINSource: false) }

    /// The URI with the PIN source's location left out (for messages and listings).
    public var redacted: String { serialized(redactingPINSource: true) }

    /// The redacted form: a URI's description never shows where its PIN is.
    public var description: String { redacted }

    private func serialized(redactingPINSource redact: Bool) -> String {
        var path = [String]()
        func add(_ name: String, _ value: String?) {
            if let value { path.append(name + "=" + Self.encode(Array(value.utf8), keep: Self.writtenPathCharacters)) }
        }
        add("library-manufacturer", libraryManufacturer)
        add("library-description", libraryDescription)
        add("library-version", libraryVersion)
        add("slot-manufacturer", slotManufacturer)
        add("slot-description", slotDescription)
        add("slot-id", slotID.map { String($0) })
        add("manufacturer", manufacturer)
        add("model", model)
        add("serial", serial)
        add("token", token)
        add("object", object)
        if let id { path.append("id=" + Self.encode(id, keep: [])) }
        path.append("type=private")
        var query = [String]()
        if let modulePath {
            query.append("module-path=" + Self.encode(Array(modulePath.utf8), keep: Self.writtenQueryCharacters))
        }
        switch pinSource {
        case .file(let f):
            query.append(
                "pin-source="
                    + (redact ? "…" : "file://" + Self.encode(Array(f.utf8), keep: Self.writtenQueryCharacters)))
        case .environment(let v): query.append("x-pin-env=" + (redact ? "…" : v))
        case nil: break
        }
        return "pkcs11:" + path.joined(separator: ";") + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    // MARK: Character rules

    /// Characters a path value may carry unencoded (RFC 7512 pk11-pchar: unreserved and
    /// `:[]@!$'()*+,=&`).
    static let pathCharacters = Set(Array("-._~:[]@!$'()*+,=&".utf8))
    /// Characters a query value may carry unencoded (RFC 7512 pk11-qchar: unreserved and
    /// `:[]@!$'()*+,=/?|;`).
    static let queryCharacters = Set(Array("-._~:[]@!$'()*+,=/?|;".utf8))

    /// What the writer leaves unencoded: fewer than a reader accepts, so no value can contain text
    /// that reads as another attribute (`=`, `&`, `?`, `;` are always encoded).
    static let writtenPathCharacters = Set(Array("-._~:[]@!$'()*+,".utf8))
    static let writtenQueryCharacters = Set(Array("-._~:[]@!$'()*+,/|".utf8))

    private static func isUnreserved(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
    }

    private static func split(_ attribute: ArraySlice<UInt8>) throws(PKCS11Error) -> (String, ArraySlice<UInt8>) {
        guard let eq = attribute.firstIndex(of: UInt8(ascii: "=")), eq > attribute.startIndex else {
            throw PKCS11Error(.invalidURI, "an attribute is not name=value")
        }
        let name = attribute[..<eq]
        guard name.count <= 64,
            name.allSatisfy({ isUnreserved($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        else { throw PKCS11Error(.invalidURI, "an attribute name has characters outside [A-Za-z0-9_-]") }
        return (String(decoding: name, as: UTF8.self), attribute[(eq + 1)...])
    }

    private static func decode(_ raw: ArraySlice<UInt8>, allowed: Set<UInt8>) throws(PKCS11Error) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(raw.count)
        var i = raw.startIndex
        while i < raw.endIndex {
            let c = raw[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < raw.endIndex, let h = hexValue(raw[i + 1]), let l = hexValue(raw[i + 2])
                else { throw PKCS11Error(.invalidURI, "a percent escape is not %HH") }
                out.append(h << 4 | l)
                i += 3
            } else {
                guard isUnreserved(c) || allowed.contains(c) else {
                    throw PKCS11Error(.invalidURI, "a value has a character that must be percent-encoded")
                }
                out.append(c)
                i += 1
            }
        }
        guard out.count <= 1024 else { throw PKCS11Error(.invalidURI, "a value is longer than 1024 bytes") }
        return out
    }

    private static func text(_ raw: ArraySlice<UInt8>, allowed: Set<UInt8>) throws(PKCS11Error) -> String {
        let bytes = try decode(raw, allowed: allowed)
        guard let s = String(validating: bytes, as: UTF8.self), !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else {
            throw PKCS11Error(.invalidURI, "a value is not UTF-8 text without control characters")
        }
        return s
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    private static func encode(_ bytes: [UInt8], keep: Set<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        for c in bytes {
            if isUnreserved(c) || (keep.contains(c) && c != UInt8(ascii: "%")) {
                out.append(c)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(c >> 4)], hex[Int(c & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
