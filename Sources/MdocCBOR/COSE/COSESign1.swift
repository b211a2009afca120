internal import CryptoCore

/// COSE_Sign1 (RFC 9052 §4.2): `[protected: bstr, unprotected: map, payload: bstr / nil, signature: bstr]`,
/// optionally with tag 18. A received message keeps its exact protected bytes; the Sig_structure is
/// built from them, never from a re-encoding.
public struct COSESign1: Sendable {
    /// The COSE_Sign1 tag.
    public static let tag: UInt64 = 18

    /// Headers, with the protected bytes as received.
    public let headers: COSEHeaders
    /// The attached payload, or nil when the payload is detached (`null`).
    public let payload: ArraySlice<UInt8>?
    /// The raw signature (r‖s for ECDSA, fixed size per curve; 64 bytes for EdDSA), not DER.
    public let signature: ArraySlice<UInt8>
    /// True when the message carried tag 18.
    public let isTagged: Bool
    /// The whole message's item.
    public let item: CBORItem

    /// Parses a COSE_Sign1 from a decoded item (tagged with 18 or untagged).
    public init(_ item: CBORItem) throws(COSEError) {
        var body = item
        var tagged = false
        if item.type == .tag {
            guard item.tagNumber == Self.tag, let content = item.tagContent else {
                throw .malformed("COSE_Sign1 tag is not 18")
            }
            body = content
            tagged = true
        }
        guard body.type == .array, body.count == 4 else { throw .malformed("COSE_Sign1 is not an array of 4") }
        let p = body[0]!
        let u = body[1]!
        let pl = body[2]!
        let s = body[3]!
        headers = try COSEHeaders(protectedItem: p, unprotectedItem: u)
        if pl.isNull {
            payload = nil
        } else if let b = pl.byteStringSlice {
            payload = b
        } else {
            throw .malformed("COSE_Sign1 payload is neither bstr nor null")
        }
        guard let sig = s.byteStringSlice else { throw .malformed("COSE_Sign1 signature is not a byte string") }
        signature = sig
        isTagged = tagged
        self.item = item
    }

    /// Parses a COSE_Sign1 from its encoding.
    public init(encoded bytes: [UInt8]) throws(COSEError) {
        let doc: CBORDocument
        do { doc = try CBORDocument(decoding: bytes) } catch { throw .cbor(error) }
        try self.init(doc.root)
    }

    /// The algorithm from the headers.
    public func algorithm() throws(COSEError) -> COSEAlgorithm { try headers.algorithm() }

    /// `Sig_structure = ["Signature1", body_protected, external_aad, payload]` (RFC 9052 §4.4).
    public static func signatureStructure<P: Collection<UInt8>, Q: Collection<UInt8>, A: Collection<UInt8>>(
        protected: P, externalAAD: A, payload: Q
    ) -> [UInt8] {
        var w = CBORWriter(capacity: 32 + protected.count + externalAAD.count + payload.count)
        w.writeArrayHeader(count: 4)
        w.writeText("Signature1")
        w.writeBytes(protected)
        w.writeBytes(externalAAD)
        w.writeBytes(payload)
        return w.bytes
    }

    /// The Sig_structure this message's signature covers. `detachedPayload` is required exactly when
    /// the payload is detached.
    public func signatureStructure(detachedPayload: [UInt8]? = nil, externalAAD: [UInt8] = []) throws(COSEError)
        -> [UInt8]
    {
        switch (payload, detachedPayload) {
        case (let p?, nil):
            return Self.signatureStructure(protected: headers.bodyProtected, externalAAD: externalAAD, payload: p)
        case (nil, let d?):
            return Self.signatureStructure(protected: headers.bodyProtected, externalAAD: externalAAD, payload: d)
        default: throw .payloadMismatch
        }
    }

    /// Verifies the signature with `key`. The algorithm comes from the headers and must match the
    /// key: ES256/ESP256 need P-256, ES384/ESP384 P-384, ES512/ESP512 P-521, EdDSA Ed25519
    /// (`allowCurveMismatch` relaxes this for the non-fully-specified ES* algorithms only).
    /// Throws `verificationFailed` when the signature is wrong.
    public func verify(
        key: COSEKey, detachedPayload: [UInt8]? = nil, externalAAD: [UInt8] = [],
        allowCurveMismatch: Bool = false
    ) throws(COSEError) {
        let alg = try algorithm()
        let tbs = try signatureStructure(detachedPayload: detachedPayload, externalAAD: externalAAD)
        try Self.verify(
            signature: signature, over: tbs, algorithm: alg, key: key, allowCurveMismatch: allowCurveMismatch)
    }

    /// Verifies a raw signature over `tbs` (the Sig_structure, or any message) with `key`.
    package static func verify<S: Collection<UInt8>>(
        signature: S, over tbs: [UInt8], algorithm alg: COSEAlgorithm, key: COSEKey,
        allowCurveMismatch: Bool = false
    ) throws(COSEError) {
        let sig = Array(signature)
        if alg == .edDSA {
            guard key.curve == .ed25519 else { throw .keyAlgorithmMismatch }
            guard sig.count == 64 else { throw .invalidSignatureLength }
            let ok: Bool
            do { ok = try key.publicKey.verifyEd25519(signature: sig, message: tbs) } catch {
                throw .verificationFailed
            }
            guard ok else { throw .verificationFailed }
            return
        }
        guard alg.isECDSA, let digest = alg.digest else { throw .unsupportedAlgorithm }
        guard key.keyType == .ec2 else { throw .keyAlgorithmMismatch }
        let fullySpecified = alg == .esp256 || alg == .esp384 || alg == .esp512
        if key.curve != alg.curve && (fullySpecified || !allowCurveMismatch) { throw .keyAlgorithmMismatch }
        guard sig.count == 2 * key.curve.coordinateSize else { throw .invalidSignatureLength }
        let ok: Bool
        do { ok = try key.publicKey.verifyECDSA(signature: sig, message: tbs, digest: digest) } catch {
            throw .invalidSignatureLength
        }
        guard ok else { throw .verificationFailed }
    }

    /// Creates a COSE_Sign1 signed by `signer`.
    /// - Parameters:
    ///   - payload: the payload to sign.
    ///   - detached: when true the message carries `null` and the payload travels separately.
    ///   - signer: produces the signature; its algorithm goes into the protected header as label 1.
    ///   - unprotected: extra unprotected header entries (e.g. `x5chain`), written in the given order.
    ///   - externalAAD: external additional authenticated data.
    ///   - tagged: prefix tag 18.
    /// - Returns: the encoded message.
    public static func sign(
        payload: [UInt8], detached: Bool, signer: some COSESigner,
        unprotected: [CBORValue.MapEntry] = [], externalAAD: [UInt8] = [],
        tagged: Bool = false
    ) throws(COSEError) -> [UInt8] {
        var w = CBORWriter(capacity: 128 + (detached ? 0 : payload.count))
        try sign(
            into: &w, payload: payload, detached: detached, signer: signer, unprotected: unprotected,
            externalAAD: externalAAD, tagged: tagged)
        return w.bytes
    }

    /// Writes a COSE_Sign1 signed by `signer` into `writer` (see `sign(payload:detached:signer:unprotected:externalAAD:tagged:)`).
    public static func sign(
        into writer: inout CBORWriter, payload: [UInt8], detached: Bool,
        signer: some COSESigner, unprotected: [CBORValue.MapEntry] = [],
        externalAAD: [UInt8] = [], tagged: Bool = false
    ) throws(COSEError) {
        try sign(
            into: &writer, payloadLength: payload.count, writePayload: { $0.writeRaw(payload) }, detached: detached,
            signer: signer,
            unprotected: unprotected, externalAAD: externalAAD, tagged: tagged)
    }

    /// Writes a COSE_Sign1 signed by `signer` into `writer`, its payload written by `writePayload`
    /// (exactly `payloadLength` bytes) straight into the Sig_structure, so a payload that is itself
    /// assembled (DeviceAuthenticationBytes) is never built as an array of its own. The protected
    /// header is `{1: alg}`. Takes the signer as an existential: callers holding `any COSESigner`
    /// run this code as compiled, not an unspecialized generic.
    public static func sign(
        into writer: inout CBORWriter, payloadLength: Int, writePayload: (inout CBORWriter) -> Void, detached: Bool,
        signer: any COSESigner, unprotected: [CBORValue.MapEntry] = [],
        externalAAD: [UInt8] = [], tagged: Bool = false
    ) throws(COSEError) {
        let alg = signer.algorithm.rawValue
        // {1: alg}: map head, label 1, then alg's head.
        let protectedLength = 2 + CBORWriter.headLength(alg < 0 ? UInt64(-1 - alg) : UInt64(alg))
        // Sig_structure = ["Signature1", bstr(protected), bstr(external_aad), bstr(payload)].
        var s = CBORWriter(
            capacity: 1 + 11 + 1 + protectedLength + CBORWriter.headLength(UInt64(externalAAD.count))
                + externalAAD.count
                + CBORWriter.headLength(UInt64(payloadLength)) + payloadLength)
        s.writeArrayHeader(count: 4)
        s.writeText("Signature1")
        writeProtected(alg, length: protectedLength, into: &s)
        s.writeBytes(externalAAD)
        s.writeHead(major: 2, argument: UInt64(payloadLength))
        let payloadStart = s.bytes.count
        writePayload(&s)
        precondition(
            s.bytes.count - payloadStart == payloadLength,
            "COSE_Sign1 payload writer wrote a different length than declared")
        let tbs = s.takeBytes()
        let sig = try signer.sign(tbs)
        if tagged { writer.writeTag(Self.tag) }
        writer.writeArrayHeader(count: 4)
        writeProtected(alg, length: protectedLength, into: &writer)
        writer.writeMapHeader(count: unprotected.count)
        for e in unprotected {
            writer.write(e.key)
            writer.write(e.value)
        }
        if detached { writer.writeNull() } else { writer.writeBytes(tbs[payloadStart...]) }
        writer.writeBytes(sig)
    }

    /// The protected header `{1: alg}` as a byte string whose content is `length` bytes.
    private static func writeProtected(_ alg: Int64, length: Int, into w: inout CBORWriter) {
        w.writeHead(major: 2, argument: UInt64(length))
        w.writeMapHeader(count: 1)
        w.writeInt(COSEHeaderLabel.algorithm)
        w.writeInt(alg)
    }
}
