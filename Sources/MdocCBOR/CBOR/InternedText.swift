/// Text that recurs in every mdoc request and response: docTypes, namespaces and the longer data
/// element identifiers of ISO/IEC 18013-5, ISO/IEC 23220 and the EU PID rulebook. A decoded `String`
/// longer than 15 UTF-8 bytes needs a heap allocation; a byte-equal match here is returned as an
/// immortal literal instead (no allocation, no reference counting). Strings of 15 bytes or fewer are
/// stored inline by Swift and never looked up.
enum InternedText {
    static let known: [String] = [
        // docTypes and namespaces
        "org.iso.18013.5.1.mDL", "org.iso.18013.5.1", "org.iso.18013.5.1.aamva", "org.iso.18013.5.1.reqid",
        "eu.europa.ec.eudi.pid.1", "org.iso.23220.photoid.1", "org.iso.23220.dtc.1",
        "org.iso.7367.1.mVRC",
        // ISO/IEC 18013-5 mDL data elements
        "issuing_authority", "driving_privileges", "un_distinguishing_sign", "administrative_number",
        "resident_address", "resident_country", "resident_postal_code", "portrait_capture_date",
        "issuing_jurisdiction", "family_name_national_character", "given_name_national_character",
        "signature_usual_mark", "biometric_template_face", "biometric_template_finger",
        "biometric_template_signature_sign", "biometric_template_iris",
        // EU PID and ISO/IEC 23220 photo ID
        "family_name_birth", "given_name_birth", "resident_house_number", "personal_administrative_number",
        "mobile_phone_number", "issuing_subdivision", "birth_place_country", "document_category",
        "nationality_code", "issuance_date_time",
    ]

    /// Entries this long or longer are not indexed.
    static let maxLength = 40

    /// The UTF-8 bytes of every entry, back to back, and per length the entries of that length as
    /// (offset in `bytes`, index in `known`).
    private static let table: (bytes: [UInt8], byLength: [[(offset: Int, index: Int)]]) = {
        var bytes = [UInt8]()
        var byLength = [[(offset: Int, index: Int)]](repeating: [], count: maxLength)
        for (i, s) in known.enumerated() where s.utf8.count < byLength.count {
            byLength[s.utf8.count].append((bytes.count, i))
            bytes += Array(s.utf8)
        }
        return (bytes, byLength)
    }()

    /// The literal equal to `text`, or nil.
    static func lookup(_ text: UnsafeRawBufferPointer) -> String? {
        let n = text.count
        guard n > 15, n < table.byLength.count, let p = text.baseAddress else { return nil }
        let t = table
        return t.bytes.withUnsafeBytes { all -> String? in
            let base = all.baseAddress!
            for e in t.byLength[n] {
                // Eight bytes at a time, then the tail (n > 15, so at least two words).
                var k = 0
                var differ = false
                while k + 8 <= n {
                    if base.loadUnaligned(fromByteOffset: e.offset + k, as: UInt64.self)
                        != p.loadUnaligned(fromByteOffset: k, as: UInt64.self)
                    {
                        differ = true
                        break
                    }
                    k += 8
                }
                if !differ, k < n,
                    base.loadUnaligned(fromByteOffset: e.offset + n - 8, as: UInt64.self)
                        != p.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
                {
                    differ = true
                }
                if !differ { return known[e.index] }
            }
            return nil
        }
    }
}
