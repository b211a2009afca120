internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Owner of one `X509`.
final class X509Box: @unchecked Sendable {
    let x509: OpaquePointer
    init(_ x509: OpaquePointer) { self.x509 = x509 }
    deinit { X509_free(x509) }
}

/// A parsed X.509 certificate (DER). Immutable and shareable between threads.
package struct X509Certificate: Sendable {
    let box: X509Box
    /// The exact DER bytes the certificate was parsed from.
    package let der: [UInt8]

    /// Parses a DER certificate; trailing bytes are rejected.
    package init<B: ContiguousBytes>(der bytes: B) throws(CryptoError) {
        let der = bytes.withUnsafeBytes { [UInt8]($0) }
        let x: OpaquePointer? = der.withUnsafeBufferPointer { buf in
            guard let base = buf.baseAddress, buf.count > 0, buf.count < 1 << 20 else { return nil }
            var p: UnsafePointer<UInt8>? = base
            guard let x = d2i_X509(nil, &p, buf.count) else { return nil }
            guard p == base + buf.count else {
                X509_free(x)
                return nil
            }
            return x
        }
        ERR_clear_error()
        guard let x else { throw .invalidCertificate }
        self.box = X509Box(x)
        self.der = der
    }

    /// The subject public key, if it is an EC (P-256/384/521) or Ed25519 key.
    package func publicKey() throws(CryptoError) -> PublicKey {
        guard let pk = X509_get_pubkey(box.x509) else {
            ERR_clear_error()
            throw .invalidPublicKey
        }
        let base = EVP_PKEY_get_base_id(pk)
        if base == EVP_PKEY_EC, let curve = Curve(bits: EVP_PKEY_get_bits(pk)) {
            return PublicKey(box: PKeyBox(pk), kind: .ec(curve))
        }
        if base == EVP_PKEY_ED25519 { return PublicKey(box: PKeyBox(pk), kind: .ed25519) }
        EVP_PKEY_free(pk)
        throw .unsupportedAlgorithm
    }

    /// Subject Key Identifier extension value, if present.
    package var subjectKeyIdentifier: [UInt8]? {
        octets(X509_get0_subject_key_id(box.x509))
    }

    /// The keyIdentifier of the Authority Key Identifier extension, if present.
    package var authorityKeyIdentifier: [UInt8]? {
        octets(X509_get0_authority_key_id(box.x509))
    }

    private func octets(_ s: UnsafePointer<ASN1_OCTET_STRING>?) -> [UInt8]? {
        guard let s, let data = ASN1_STRING_get0_data(s) else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(s))))
    }

    /// Start of validity, seconds since 1970-01-01T00:00:00Z.
    package var notBefore: Int64 {
        var t: Int64 = 0
        return mdoc_asn1_time_to_unix(X509_get0_notBefore(box.x509), &t) == 1 ? t : Int64.max
    }

    /// End of validity, seconds since 1970-01-01T00:00:00Z.
    package var notAfter: Int64 {
        var t: Int64 = 0
        return mdoc_asn1_time_to_unix(X509_get0_notAfter(box.x509), &t) == 1 ? t : Int64.min
    }

    /// The subject name in RFC 2253 form (e.g. `CN=reader,C=US`).
    package var subject: String { name(X509_get_subject_name(box.x509)) }

    /// The issuer name in RFC 2253 form.
    package var issuer: String { name(X509_get_issuer_name(box.x509)) }

    private func name(_ n: OpaquePointer?) -> String {
        guard let n, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard X509_NAME_print_ex(bio, n, 0, mdoc_XN_FLAG_RFC2253) >= 0 else { return "" }
        var buf = ByteArrays.zeros(count: 1024)
        let read = buf.withUnsafeMutableBufferPointer { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
        return read > 0 ? String(decoding: buf[0..<Int(read)], as: UTF8.self) : ""
    }

    /// The dNSName entries of the subjectAltName extension, in order (empty when there is none, it
    /// is malformed or present twice). An entry that is not printable ASCII is left out: it can
    /// never equal a client identifier.
    package var dnsNames: [String] {
        guard let g = mdoc_x509_san(box.x509) else {
            ERR_clear_error()
            return []
        }
        defer { mdoc_GENERAL_NAMES_free(g) }
        var names = [String]()
        for i in 0..<mdoc_sk_GENERAL_NAME_num(g) {
            guard let s = mdoc_general_name_dns(g, i), let data = ASN1_STRING_get0_data(s) else { continue }
            let bytes = UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(s)))
            guard !bytes.isEmpty, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { continue }
            names.append(String(decoding: bytes, as: UTF8.self))
        }
        return names
    }

    /// The OIDs the Extended Key Usage extension lists, in dotted form (e.g. `1.0.18013.5.1.6`); empty
    /// when the extension is absent or malformed.
    package var extendedKeyUsages: [String] {
        var crit: Int32 = 0
        guard let raw = X509_get_ext_d2i(box.x509, NID_ext_key_usage, &crit, nil) else {
            ERR_clear_error()
            return []
        }
        let eku = OpaquePointer(raw)
        defer { mdoc_EXTENDED_KEY_USAGE_free(eku) }
        var oids = [String]()
        var text = [CChar](repeating: 0, count: 128)
        for i in 0..<mdoc_sk_ASN1_OBJECT_num(eku) {
            guard let o = mdoc_sk_ASN1_OBJECT_value(eku, i) else { continue }
            // Dotted form only (no_name = 1); an OID too long for the buffer is left out (none that
            // mdoc checks is anywhere near 127 characters). Decoded from the buffer's bytes (a lazy
            // collection here cost a run-time conformance scan on first use).
            let n = OBJ_obj2txt(&text, Int32(text.count), o, 1)
            guard n > 0, Int(n) < text.count else { continue }
            oids.append(
                text.withUnsafeBytes {
                    String(decoding: UnsafeRawBufferPointer(rebasing: $0[..<Int(n)]), as: UTF8.self)
                })
        }
        return oids
    }

    /// True when basicConstraints marks the certificate as a CA.
    package var isCA: Bool { X509_check_ca(box.x509) > 0 }

    /// The key usage bits (RFC 5280 §4.2.1.3, OpenSSL's `KU_*` values, e.g. digitalSignature `0x80`),
    /// or nil when the certificate has no key usage extension.
    package var keyUsage: UInt32? {
        let flags = X509_get_extension_flags(box.x509)
        ERR_clear_error()
        guard flags & UInt32(EXFLAG_KUSAGE) != 0 else { return nil }
        return X509_get_key_usage(box.x509)
    }

    /// The digitalSignature key usage bit.
    package static let keyUsageDigitalSignature = UInt32(KU_DIGITAL_SIGNATURE)
    /// The keyCertSign key usage bit.
    package static let keyUsageCertSign = UInt32(KU_KEY_CERT_SIGN)

    /// True when the certificate is self-signed: issuer and subject names equal and its signature
    /// verifies under its own key.
    package var isSelfSigned: Bool { namesMatch && isSigned(by: self) }

    /// True when the issuer and subject names are equal (`X509_NAME_cmp`).
    package var namesMatch: Bool {
        X509_NAME_cmp(X509_get_issuer_name(box.x509), X509_get_subject_name(box.x509)) == 0
    }

    /// True when this certificate's signature verifies under `issuer`'s public key.
    package func isSigned(by issuer: X509Certificate) -> Bool {
        guard let pk = X509_get0_pubkey(issuer.box.x509) else { return false }
        defer { ERR_clear_error() }
        return X509_verify(box.x509, pk) == 1
    }

    /// Validates the path `leaf ← intermediates… ← one of anchors` at `time` (seconds since 1970)
    /// with OpenSSL's strict X.509 checks on the leaf and intermediates; the anchor is taken as an input
    /// (RFC 5280 §6.1: its name, key and validity; a CA without keyUsage or key identifiers anchors).
    /// Profile rules (EKU, key usage) are the caller's job.
    package static func validatePath(
        leaf: X509Certificate, intermediates: [X509Certificate], anchors: [X509Certificate], at time: Int64
    ) throws(CryptoError) {
        guard let store = X509_STORE_new() else { throw .operationFailed(operation: "store") }
        defer { X509_STORE_free(store) }
        for a in anchors {
            guard X509_STORE_add_cert(store, a.box.x509) == 1 else {
                ERR_clear_error()
                throw .operationFailed(operation: "store add")
            }
        }
        guard let chain = mdoc_sk_X509_new_null() else { throw .operationFailed(operation: "stack") }
        defer { mdoc_sk_X509_free(chain) }
        for c in intermediates { _ = mdoc_sk_X509_push(chain, c.box.x509) }
        guard let ctx = X509_STORE_CTX_new() else { throw .operationFailed(operation: "store ctx") }
        defer { X509_STORE_CTX_free(ctx) }
        guard X509_STORE_CTX_init(ctx, store, leaf.box.x509, chain) == 1 else {
            throw .operationFailed(operation: "store ctx init")
        }
        X509_STORE_CTX_set_flags(ctx, UInt(X509_V_FLAG_X509_STRICT))
        // The anchor is an input (RFC 5280 §6.1): its own keyUsage and key identifiers are not required.
        mdoc_x509_anchor_as_input(ctx)
        X509_STORE_CTX_set_time(ctx, 0, time_t(time))
        let rc = X509_verify_cert(ctx)
        let err = X509_STORE_CTX_get_error(ctx)
        ERR_clear_error()
        guard rc == 1 else { throw .chainValidationFailed(reason: err) }
    }
}

/// Creates X.509 certificates: test IACAs, document signers, reader roots and reader certificates
/// following the ISO/IEC 18013-5 Annex B profiles. For test and tooling use; signs with ECDSA.
package enum X509Builder {
    /// Extensions to add, in OpenSSL config syntax keyed by NID.
    package struct Profile: Sendable {
        package var isCA: Bool
        package var pathLength: Int?
        /// OpenSSL's config syntax; empty: no key usage extension.
        package var keyUsage: String
        package var extendedKeyUsage: String?
        package var crlDistributionPoint: String?
        package var issuerAlternativeName: String?
        /// OpenSSL's config syntax, e.g. `DNS:verifier.example`; nil: no subjectAltName.
        package var subjectAlternativeName: String?
        package init(
            isCA: Bool, pathLength: Int? = nil, keyUsage: String, extendedKeyUsage: String? = nil,
            crlDistributionPoint: String? = nil, issuerAlternativeName: String? = nil,
            subjectAlternativeName: String? = nil
        ) {
            self.subjectAlternativeName = subjectAlternativeName
            self.isCA = isCA
            self.pathLength = pathLength
            self.keyUsage = keyUsage
            self.extendedKeyUsage = extendedKeyUsage
            self.crlDistributionPoint = crlDistributionPoint
            self.issuerAlternativeName = issuerAlternativeName
        }
    }

    /// Issues a certificate for `subjectKey`, signed by `issuerKey` (self-signed when `issuer` is nil).
    /// The subject is a list of (attribute short name, value) pairs in order, e.g. `[("C", "UT"),
    /// ("CN", "Test IACA")]`; the issuer name is copied from the issuer certificate's subject.
    package static func issue(
        subject: [(attribute: String, value: String)], subjectKey: PublicKey, issuer: X509Certificate?,
        issuerKey: PrivateKey, serial: UInt64, notBefore: Int64, notAfter: Int64,
        profile: Profile
    ) throws(CryptoError) -> X509Certificate {
        guard case .ec(let curve) = issuerKey.kind else { throw .unsupportedAlgorithm }
        guard let x = X509_new() else { throw .operationFailed(operation: "X509_new") }
        defer { X509_free(x) }
        func check(_ ok: Bool, _ step: String) throws(CryptoError) {
            if !ok {
                ERR_clear_error()
                throw .operationFailed(operation: step)
            }
        }
        try check(X509_set_version(x, 2) == 1, "version")
        let sn = ASN1_INTEGER_new()
        defer { ASN1_INTEGER_free(sn) }
        let bn = BN_new()
        defer { BN_free(bn) }
        try check(
            BN_set_word(bn, UInt(serial)) == 1 && BN_to_ASN1_INTEGER(bn, sn) != nil
                && X509_set_serialNumber(x, sn) == 1, "serial")
        try check(ASN1_TIME_set(X509_getm_notBefore(x), time_t(notBefore)) != nil, "notBefore")
        try check(ASN1_TIME_set(X509_getm_notAfter(x), time_t(notAfter)) != nil, "notAfter")
        try check(X509_set_pubkey(x, try subjectKey.evp().pkey) == 1, "pubkey")
        guard let subj = X509_NAME_new() else { throw .operationFailed(operation: "name") }
        defer { X509_NAME_free(subj) }
        for (attribute, value) in subject {
            try check(X509_NAME_add_entry_by_txt(subj, attribute, MBSTRING_UTF8, value, -1, -1, 0) == 1, "name entry")
        }
        let issuerX = issuer?.box.x509
        let iss = issuerX.map { X509_get_subject_name($0) } ?? subj
        try check(X509_set_subject_name(x, subj) == 1 && X509_set_issuer_name(x, iss) == 1, "names")
        var bc = profile.isCA ? "critical,CA:TRUE" : "critical,CA:FALSE"
        if profile.isCA, let p = profile.pathLength { bc += ",pathlen:\(p)" }
        try check(mdoc_x509_add_ext(x, issuerX, NID_basic_constraints, bc) == 1, "basicConstraints")
        if !profile.keyUsage.isEmpty {
            try check(mdoc_x509_add_ext(x, issuerX, NID_key_usage, profile.keyUsage) == 1, "keyUsage")
        }
        try check(mdoc_x509_add_ext(x, issuerX, NID_subject_key_identifier, "hash") == 1, "SKI")
        if issuer != nil {
            try check(mdoc_x509_add_ext(x, issuerX, NID_authority_key_identifier, "keyid:always") == 1, "AKI")
        }
        if let eku = profile.extendedKeyUsage {
            try check(mdoc_x509_add_ext(x, issuerX, NID_ext_key_usage, eku) == 1, "EKU")
        }
        if let crl = profile.crlDistributionPoint {
            try check(mdoc_x509_add_ext(x, issuerX, NID_crl_distribution_points, crl) == 1, "CRL DP")
        }
        if let ian = profile.issuerAlternativeName {
            try check(mdoc_x509_add_ext(x, issuerX, NID_issuer_alt_name, ian) == 1, "IAN")
        }
        if let san = profile.subjectAlternativeName {
            try check(mdoc_x509_add_ext(x, issuerX, NID_subject_alt_name, san) == 1, "SAN")
        }
        try check(X509_sign(x, try issuerKey.evp().pkey, curve.digest.md) > 0, "sign")
        var out: UnsafeMutablePointer<UInt8>? = nil
        let len = i2d_X509(x, &out)
        guard len > 0, let out else { throw .operationFailed(operation: "i2d") }
        defer { mdoc_OPENSSL_free(out) }
        return try X509Certificate(der: UnsafeRawBufferPointer(start: out, count: Int(len)))
    }
}
