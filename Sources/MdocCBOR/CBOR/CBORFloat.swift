/// Half/single/double conversions for CBOR floats (RFC 8949 §3.3, Appendix D).
enum CBORFloat {
    /// The value of a float node from its raw bits and width flag.
    static func value(bits: UInt64, flags: UInt8) -> Double {
        switch flags {
        case Node.floatHalf: return halfToDouble(UInt16(truncatingIfNeeded: bits))
        case Node.floatSingle: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
        default: return Double(bitPattern: bits)
        }
    }

    /// RFC 8949 Appendix D.
    static func halfToDouble(_ h: UInt16) -> Double {
        let exp = Int((h >> 10) & 0x1f)
        let mant = Double(h & 0x3ff)
        var val: Double
        if exp == 0 {
            val = mant * 0x1p-24
        } else if exp != 31 {
            val = (mant + 1024) * Double(sign: .plus, exponent: exp - 25, significand: 1)
        } else {
            val = mant == 0 ? .infinity : .nan
        }
        return h & 0x8000 != 0 ? -val : val
    }

    /// Exact conversion to half precision, or nil if the value would change.
    static func toHalf(_ d: Double) -> UInt16? {
        if d.isNaN { return 0x7e00 }
        let sign: UInt16 = d.sign == .minus ? 0x8000 : 0
        if d.isInfinite { return sign | 0x7c00 }
        if d == 0 { return sign }
        let a = abs(d)
        // Subnormal halves: multiples of 2^-24 below 2^-14.
        if a < 0x1p-14 {
            let m = a / 0x1p-24
            guard m == m.rounded(), m >= 1, m < 1024 else { return nil }
            return sign | UInt16(m)
        }
        guard a <= 65504 else { return nil }
        let e = a.exponent  // unbiased
        guard e >= -14, e <= 15 else { return nil }
        let scaled = a.significand * 1024  // [1024, 2048)
        guard scaled == scaled.rounded() else { return nil }
        let mant = UInt16(scaled) - 1024
        return sign | UInt16(e + 15) << 10 | mant
    }

    /// The width flag of the preferred (shortest exact) encoding of `d`.
    static func preferredWidth(_ d: Double) -> UInt8 {
        if toHalf(d) != nil { return Node.floatHalf }
        if d.isNaN || Double(Float(d)) == d { return Node.floatSingle }
        return Node.floatDouble
    }
}
