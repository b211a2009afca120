/// Diagnostic notation (RFC 8949 §8) for decoded items, with indefinite lengths shown as `_` and,
/// optionally, tag-24 contents expanded as `<< … >>` (RFC 8610 Appendix G.3).
public enum CBORDiagnostic {
    /// Formatting options.
    public struct Options: Sendable {
        /// Show the decoded content of tag-24 byte strings as `24(<< item >>)`.
        public var expandEmbedded: Bool
        /// Indent nested arrays and maps by this many spaces per level (0 = one line).
        public var indent: Int
        /// Creates options.
        public init(expandEmbedded: Bool = false, indent: Int = 0) {
            self.expandEmbedded = expandEmbedded
            self.indent = indent
        }
    }

    /// Diagnostic notation of `item`.
    public static func describe(_ item: CBORItem, options: Options = Options()) -> String {
        var out = ""
        write(item, into: &out, options: options, level: 0)
        return out
    }

    /// An indefinite-length string as its chunks: `(_ h'01', h'02')` (RFC 8949 §8.1).
    private static func writeChunks(_ item: CBORItem, into out: inout String, options: Options, level: Int) {
        out += "(_ "
        var first = true
        for c in item.children {
            if !first { out += ", " }
            first = false
            write(c, into: &out, options: options, level: level)
        }
        out += ")"
    }

    private static func write(_ item: CBORItem, into out: inout String, options: Options, level: Int) {
        let indef = item.isIndefiniteLength
        switch item.type {
        case .unsignedInt:
            out += String(item.argument)
        case .negativeInt:
            let n = item.argument
            out += n == UInt64.max ? "-18446744073709551616" : "-" + String(n + 1)
        case .byteString:
            if indef {
                writeChunks(item, into: &out, options: options, level: level)
            } else {
                out += "h'"
                out += hexString(item.byteStringSlice!)
                out += "'"
            }
        case .textString:
            if indef {
                writeChunks(item, into: &out, options: options, level: level)
            } else {
                out += quoted(item.stringValue!)
            }
        case .array, .map:
            let isMap = item.type == .map
            out += isMap ? "{" : "["
            if indef { out += "_ " }
            var first = true
            let pretty = options.indent > 0 && item.count > 0
            // Before each entry: the separator, and in pretty form a new line at the entry's depth.
            func next() {
                if !first { out += pretty ? "," : ", " }
                first = false
                if pretty { out += "\n" + String(repeating: " ", count: options.indent * (level + 1)) }
            }
            if isMap {
                for (k, v) in item.mapEntries {
                    next()
                    write(k, into: &out, options: options, level: level + 1)
                    out += ": "
                    write(v, into: &out, options: options, level: level + 1)
                }
            } else {
                for e in item.children {
                    next()
                    write(e, into: &out, options: options, level: level + 1)
                }
            }
            if pretty { out += "\n" + String(repeating: " ", count: options.indent * level) }
            out += isMap ? "}" : "]"
        case .tag:
            out += String(item.argument) + "("
            if options.expandEmbedded, item.argument == 24, let doc = try? item.decodeEmbedded() {
                out += "<< "
                write(doc.root, into: &out, options: options, level: level)
                out += " >>"
            } else {
                write(item.tagContent!, into: &out, options: options, level: level)
            }
            out += ")"
        case .simple:
            switch item.argument {
            case 20: out += "false"
            case 21: out += "true"
            case 22: out += "null"
            case 23: out += "undefined"
            default: out += "simple(\(item.argument))"
            }
        case .float:
            out += formatFloat(item.doubleValue!)
        }
    }

    /// Formats a float as diagnostic notation does: `Infinity`, `-Infinity`, `NaN`, or a decimal
    /// with a fraction part (`1.0`, `1.5`, `1.0e+300`).
    static func formatFloat(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        var s = "\(d)"
        if let e = s.firstIndex(where: { $0 == "e" }) {
            var mantissa = String(s[..<e])
            var exp = String(s[s.index(after: e)...])
            if !mantissa.contains(".") { mantissa += ".0" }
            if !exp.hasPrefix("-") && !exp.hasPrefix("+") { exp = "+" + exp }
            s = mantissa + "e" + exp
        } else if !s.contains(".") {
            s += ".0"
        }
        return s
    }

    /// `s` as a JSON string literal (RFC 8259): quotes, backslashes and control characters escaped.
    /// Diagnostic notation uses the same form for text strings.
    public static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                // C0 and C1 controls, DEL, line/paragraph separators and bidirectional controls:
                // escaped, so quoted text can never move a terminal's cursor, start a line or
                // reorder what is displayed around it.
                let v = u.value
                if v < 0x20 || v == 0x7f || (v >= 0x80 && v < 0xa0) || v == 0x2028 || v == 0x2029
                    || (v >= 0x202a && v <= 0x202e)
                    || (v >= 0x2066 && v <= 0x2069) || v == 0x200e || v == 0x200f
                {
                    out +=
                        "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count)
                        + String(u.value, radix: 16)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }
}

/// Lowercase hex of `bytes` (two digits a byte, no separators): diagnostic notation's `h'…'`, key
/// identifiers in the consent model and the CLI's listings.
package func hexString<C: Collection<UInt8>>(_ bytes: C) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}
