#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// RFC 3339 date-times (`tdate`, tag 0) and full-dates (tag 1004, RFC 8943), parsed without
/// locale-dependent formatters.
public enum MdocDate {
    /// Parses `YYYY-MM-DDThh:mm:ss[.frac](Z|±hh:mm)`. ISO 18013-5 requires no fraction and `Z`, but
    /// peers send offsets; both are accepted, the instant is what counts.
    public static func parseDateTime(_ s: String) -> Date? {
        var s = s
        return s.withUTF8 { parseDateTime(utf8: $0) }
    }

    /// `parseDateTime` over UTF-8 bytes in place (no string, no copy).
    static func parseDateTime(utf8 u: UnsafeBufferPointer<UInt8>) -> Date? {
        guard u.count >= 20, u[4] == 0x2d, u[7] == 0x2d, u[10] == 0x54 || u[10] == 0x74, u[13] == 0x3a, u[16] == 0x3a
        else { return nil }
        guard let year = num(u, 0, 4), let month = num(u, 5, 2), let day = num(u, 8, 2),
            let hour = num(u, 11, 2), let minute = num(u, 14, 2), let second = num(u, 17, 2)
        else { return nil }
        guard validDate(year, month, day), hour < 24, minute < 60, second < 61 else { return nil }
        var i = 19
        var fraction = 0.0
        if i < u.count && u[i] == 0x2e {
            i += 1
            var scale = 0.1
            let start = i
            while i < u.count, u[i] >= 0x30, u[i] <= 0x39 {
                fraction += Double(u[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            guard i > start, i - start <= 9 else { return nil }
        }
        guard i < u.count else { return nil }
        var offset = 0
        if u[i] == 0x5a || u[i] == 0x7a {
            i += 1
        } else if u[i] == 0x2b || u[i] == 0x2d {
            guard i + 6 == u.count, u[i + 3] == 0x3a, let oh = num(u, i + 1, 2), let om = num(u, i + 4, 2), oh < 24,
                om < 60
            else { return nil }
            offset = (oh * 3600 + om * 60) * (u[i] == 0x2d ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == u.count else { return nil }
        let days = daysFromCivil(year, month, day)
        let secs = Double(days * 86400 + hour * 3600 + minute * 60 + min(second, 59) - offset) + fraction
        return Date(timeIntervalSince1970: secs)
    }

    /// Parses `YYYY-MM-DD` as midnight UTC.
    public static func parseFullDate(_ s: String) -> Date? {
        var s = s
        return s.withUTF8 { u in
            guard u.count == 10, u[4] == 0x2d, u[7] == 0x2d, let y = num(u, 0, 4), let m = num(u, 5, 2),
                let d = num(u, 8, 2),
                validDate(y, m, d)
            else { return nil }
            return Date(timeIntervalSince1970: Double(daysFromCivil(y, m, d) * 86400))
        }
    }

    /// Formats as `YYYY-MM-DDThh:mm:ssZ` (whole seconds, UTC), the form ISO 18013-5 requires.
    public static func formatDateTime(_ date: Date) -> String {
        let t = Int(date.timeIntervalSince1970.rounded(.down))
        let days = t >= 0 ? t / 86400 : (t - 86399) / 86400
        let rem = t - days * 86400
        let (y, m, d) = civilFromDays(days)
        func pad(_ v: Int, _ w: Int) -> String {
            let s = String(v)
            return s.count >= w ? s : String(repeating: "0", count: w - s.count) + s
        }
        return
            "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(rem / 3600, 2)):\(pad((rem % 3600) / 60, 2)):\(pad(rem % 60, 2))Z"
    }

    /// The `n` decimal digits at `at` (nil for anything else). Inlined: with `n` a constant at every
    /// call, the loop unrolls into one compare per digit.
    @inline(__always)
    private static func num(_ u: UnsafeBufferPointer<UInt8>, _ at: Int, _ n: Int) -> Int? {
        guard at + n <= u.count else { return nil }
        var v = 0
        for k in at..<(at + n) {
            let d = u[k] &- 0x30
            guard d < 10 else { return nil }
            v = v &* 10 &+ Int(d)
        }
        return v
    }

    private static func validDate(_ y: Int, _ m: Int, _ d: Int) -> Bool {
        guard m >= 1, m <= 12, d >= 1 else { return false }
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
        let dim: Int
        switch m {
        case 2: dim = leap ? 29 : 28
        case 4, 6, 9, 11: dim = 30
        default: dim = 31
        }
        return d <= dim
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    private static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    private static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp + (mp < 10 ? 3 : -9)
        return (m <= 2 ? y + 1 : y, m, d)
    }
}

extension CBORItem {
    /// The instant of a `tdate` (tag 0 over an RFC 3339 text string) or a `full-date` (tag 1004 over
    /// `YYYY-MM-DD`, or tag 100 over days since 1970).
    public var dateValue: Date? {
        guard type == .tag, let content = tagContent else { return nil }
        switch tagNumber {
        case 0:
            guard content.type == .textString else { return nil }
            if content.isIndefiniteLength { return content.stringValue.flatMap(MdocDate.parseDateTime) }
            let r = content.contentRange
            return content.storage.withBytes {
                MdocDate.parseDateTime(utf8: UnsafeBufferPointer(rebasing: $0[r]))
            }
        case 1004: return content.stringValue.flatMap(MdocDate.parseFullDate)
        case 100: return content.int64Value.map { Date(timeIntervalSince1970: Double($0) * 86400) }
        default: return nil
        }
    }
}
