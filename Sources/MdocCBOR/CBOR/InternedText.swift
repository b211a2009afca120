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

    /// `known`, grouped by UTF-8 length.
    private static let byLength: [[String]] = {
        var t = [[String]](repeating: [], count: 40)
        for s in known where s.utf8.count < t.count { t[s.utf8.count].append(s) }
        return t
    }()

    /// The literal equal to `bytes`, or nil.
    static func lookup(_ bytes: UnsafeRawBufferPointer) -> String? {
        let n = bytes.count
        guard n > 15, n < byLength.count else { return nil }
        for s in byLength[n] where s.utf8.withContiguousStorageIfAvailable({ UnsafeRawBufferPointer($0).elementsEqual(bytes) }) == true {
            return s
        }
        return nil
    }
}
