#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import CLongfellowABI
internal import CryptoCore

/// The ISRG Longfellow library (`libzk_cred_longfellow.so`, abetterinternet/zk-cred-longfellow, MPL-2.0)
/// behind one door: every call into it is in this file. It is loaded with `dlopen` from a file the
/// caller names, and refused unless its uniffi contract version and the checksums of the four functions
/// used are the ones this file was written against. Values cross as the generated bindings pass them
/// (all integers big-endian): a top-level string as its raw UTF-8 bytes; a byte slice borrowed as
/// `ForeignBytes`; a list of strings as a count and length-prefixed UTF-8; `CircuitVersion` as its
/// 1-based variant index. RustBuffer arguments are consumed by the library and are made by it;
/// returned ones are freed here. Object handles passed to the library are consumed, so calls get a
/// clone and the kept handle is freed when its owner goes away.
final class LongfellowLibrary: @unchecked Sendable {
    // @unchecked: immutable after init; the library's functions are thread-safe (uniffi objects are
    // `Send + Sync`), and the handle is never closed (its objects may outlive any one owner).

    /// The SHA-256 of the pinned library release (pylongfellow 0.7.0's `libzk_cred_longfellow.so`, the
    /// file `scripts/zk-setup.sh` installs; a test checks the two agree). Nothing else is loaded.
    static let pinnedSHA256 = "70a4d58949d75593249738bced4cdac938335bea800af170dbcb5ef6cb7c4cff"

    /// The uniffi contract version of the bindings this file follows.
    static let contractVersion: UInt32 = 30
    /// The API checksums of the functions called (uniffi 0.31/0.32 scaffolding of zk-cred-longfellow).
    static let checksums: [(symbol: String, value: UInt16)] = [
        ("uniffi_zk_cred_longfellow_checksum_func_initialize_prover", 50744),
        ("uniffi_zk_cred_longfellow_checksum_func_initialize_verifier", 56244),
        ("uniffi_zk_cred_longfellow_checksum_func_prove", 14354),
        ("uniffi_zk_cred_longfellow_checksum_func_verify", 63331),
    ]

    /// Why the library cannot be used, or a call failed (static text; never a value from a request).
    enum Failure: Error, Sendable, Equatable {
        /// The file is missing or is not a loadable library.
        case unloadable
        /// A symbol the bindings need is absent.
        case missingSymbol
        /// The uniffi contract version differs.
        case contractVersion
        /// A function's API checksum differs: the library is another build of another interface.
        case checksum
        /// The call returned an error object; its text (the library's own message, which may name
        /// an element identifier) is not kept.
        case callFailed
        /// The library panicked.
        case panicked
        /// An argument does not fit the ABI (a byte slice of 2 GiB or more).
        case argumentTooLarge
        /// The library returned bytes in an unexpected shape.
        case malformedResult
    }

    private let fromBytes: mdoc_lf_buffer_from_bytes_fn
    private let bufferFree: mdoc_lf_buffer_free_fn
    private let initializeProver: mdoc_lf_initialize_fn
    private let initializeVerifier: mdoc_lf_initialize_fn
    private let proveFn: mdoc_lf_prove_fn
    private let verifyFn: mdoc_lf_verify_fn
    private let cloneProver: mdoc_lf_clone_fn
    private let freeProver: mdoc_lf_free_fn
    private let cloneVerifier: mdoc_lf_clone_fn
    private let freeVerifier: mdoc_lf_free_fn
    private let freeError: mdoc_lf_free_fn

    /// Loads the library open on `descriptor` (whose content was checked) and checks its contract.
    init(descriptor: Int32) throws(Failure) {
        guard let handle = DescriptorLoading.open(descriptor: descriptor, flags: RTLD_NOW | RTLD_LOCAL) else {
            throw .unloadable
        }
        func symbol<T>(_ name: String, as: T.Type) throws(Failure) -> T {
            guard let p = dlsym(handle, name) else { throw .missingSymbol }
            return unsafeBitCast(p, to: T.self)
        }
        let contract = try symbol(
            "ffi_zk_cred_longfellow_uniffi_contract_version", as: mdoc_lf_contract_version_fn.self)
        guard contract() == Self.contractVersion else { throw .contractVersion }
        for (name, value) in Self.checksums {
            guard try symbol(name, as: mdoc_lf_checksum_fn.self)() == value else { throw .checksum }
        }
        fromBytes = try symbol("ffi_zk_cred_longfellow_rustbuffer_from_bytes", as: mdoc_lf_buffer_from_bytes_fn.self)
        bufferFree = try symbol("ffi_zk_cred_longfellow_rustbuffer_free", as: mdoc_lf_buffer_free_fn.self)
        initializeProver = try symbol(
            "uniffi_zk_cred_longfellow_fn_func_initialize_prover", as: mdoc_lf_initialize_fn.self)
        initializeVerifier = try symbol(
            "uniffi_zk_cred_longfellow_fn_func_initialize_verifier", as: mdoc_lf_initialize_fn.self)
        proveFn = try symbol("uniffi_zk_cred_longfellow_fn_func_prove", as: mdoc_lf_prove_fn.self)
        verifyFn = try symbol("uniffi_zk_cred_longfellow_fn_func_verify", as: mdoc_lf_verify_fn.self)
        cloneProver = try symbol("uniffi_zk_cred_longfellow_fn_clone_mdoczkprover", as: mdoc_lf_clone_fn.self)
        freeProver = try symbol("uniffi_zk_cred_longfellow_fn_free_mdoczkprover", as: mdoc_lf_free_fn.self)
        cloneVerifier = try symbol("uniffi_zk_cred_longfellow_fn_clone_mdoczkverifier", as: mdoc_lf_clone_fn.self)
        freeVerifier = try symbol("uniffi_zk_cred_longfellow_fn_free_mdoczkverifier", as: mdoc_lf_free_fn.self)
        freeError = try symbol("uniffi_zk_cred_longfellow_fn_free_mdoczkerror", as: mdoc_lf_free_fn.self)
    }

    // MARK: Objects

    /// A prover or verifier object of the library, freed with its owner.
    final class Object: @unchecked Sendable {
        // @unchecked: the handle is immutable; the library's objects are thread-safe.
        fileprivate let handle: UInt64
        private let free: mdoc_lf_free_fn
        fileprivate init(_ handle: UInt64, free: @escaping mdoc_lf_free_fn) {
            self.handle = handle
            self.free = free
        }
        deinit {
            var status = mdoc_lf_call_status()
            free(handle, &status)
        }
    }

    /// A prover for one decompressed circuit (`version` 6 or 7, 1 to 4 attributes).
    func prover(circuit: [UInt8], version: Int, attributes: Int) throws(Failure) -> Object {
        Object(try initialize(initializeProver, circuit, version, attributes), free: freeProver)
    }

    /// A verifier for one decompressed circuit.
    func verifier(circuit: [UInt8], version: Int, attributes: Int) throws(Failure) -> Object {
        Object(try initialize(initializeVerifier, circuit, version, attributes), free: freeVerifier)
    }

    private func initialize(_ fn: mdoc_lf_initialize_fn, _ circuit: [UInt8], _ version: Int, _ attributes: Int)
        throws(Failure) -> UInt64
    {
        guard version == 6 || version == 7, (1...4).contains(attributes) else { throw .argumentTooLarge }
        // CircuitVersion: the 1-based variant index (V6 = 1, V7 = 2).
        let variant = try buffer(Self.bigEndian(Int32(version == 6 ? 1 : 2)))
        var status = mdoc_lf_call_status()
        let handle = try Self.borrowed(circuit) { (bytes) throws(Failure) in
            fn(bytes, variant, UInt8(attributes), &status)
        }
        try check(&status)
        return handle
    }

    // MARK: Calls

    /// Proves: the proof bytes, or the failure (no partial output).
    func prove(
        _ prover: Object, deviceResponse: [UInt8], nameSpace: String, claims: [String], sessionTranscript: [UInt8],
        time: String
    ) throws(Failure) -> [UInt8] {
        let ns = try buffer(Array(nameSpace.utf8))
        let list = try buffer(Self.stringList(claims))
        let t = try buffer(Array(time.utf8))
        var status = mdoc_lf_call_status()
        let clone = cloneProver(prover.handle, &status)
        try check(&status)
        let result = try Self.borrowed(deviceResponse) { (response) throws(Failure) in
            try Self.borrowed(sessionTranscript) { (transcript) throws(Failure) in
                proveFn(clone, response, ns, list, transcript, t, &status)
            }
        }
        try check(&status)
        defer {
            var s = mdoc_lf_call_status()
            bufferFree(result, &s)
        }
        // Vec<u8>: a big-endian i32 length, then the bytes.
        let bytes = Self.bytes(result)
        guard bytes.count >= 4 else { throw .malformedResult }
        let n = Int(Self.readInt32(bytes, at: 0))
        guard n >= 0, n == bytes.count - 4 else { throw .malformedResult }
        return Array(bytes[4...])
    }

    /// Verifies a proof for the claims `(identifier, CBOR value)` of `docType`.
    func verify(
        _ verifier: Object, issuerPublicKey: [UInt8], claims: [(identifier: String, value: [UInt8])], docType: String,
        deviceNameSpacesBytes: [UInt8], sessionTranscript: [UInt8], time: String, proof: [UInt8]
    ) throws(Failure) {
        var records = Self.bigEndian(Int32(claims.count))
        for c in claims {
            records += Self.bigEndian(Int32(c.identifier.utf8.count)) + Array(c.identifier.utf8)
            records += Self.bigEndian(Int32(c.value.count)) + c.value
        }
        let attributes = try buffer(records)
        let doc = try buffer(Array(docType.utf8))
        let t = try buffer(Array(time.utf8))
        var status = mdoc_lf_call_status()
        let clone = cloneVerifier(verifier.handle, &status)
        try check(&status)
        try Self.borrowed(issuerPublicKey) { (key) throws(Failure) in
            try Self.borrowed(deviceNameSpacesBytes) { (dns) throws(Failure) in
                try Self.borrowed(sessionTranscript) { (transcript) throws(Failure) in
                    try Self.borrowed(proof) { (p) throws(Failure) in
                        verifyFn(clone, key, attributes, doc, dns, transcript, t, p, &status)
                    }
                }
            }
        }
        try check(&status)
    }

    // MARK: The ABI's plumbing

    /// A RustBuffer the library allocated, holding `bytes` (consumed by the call it is passed to).
    private func buffer(_ bytes: [UInt8]) throws(Failure) -> mdoc_lf_rust_buffer {
        var status = mdoc_lf_call_status()
        let b = try Self.borrowed(bytes) { (f) throws(Failure) in fromBytes(f, &status) }
        try check(&status)
        return b
    }

    /// Turns a call status into a failure, freeing what the library returned with it. An error
    /// object's text is not read: it may name an element identifier from the request.
    private func check(_ status: inout mdoc_lf_call_status) throws(Failure) {
        guard status.code != 0 else { return }
        let code = status.code
        let payload = Self.bytes(status.error_buf)
        var s = mdoc_lf_call_status()
        bufferFree(status.error_buf, &s)
        status = mdoc_lf_call_status()
        if code == 1 {
            if payload.count == 8 {
                var handle: UInt64 = 0
                for b in payload { handle = handle << 8 | UInt64(b) }
                freeError(handle, &s)
            }
            throw .callFailed
        }
        throw .panicked
    }

    /// `body` with `bytes` lent as ForeignBytes (a slice under 2 GiB).
    private static func borrowed<R>(_ bytes: [UInt8], _ body: (mdoc_lf_foreign_bytes) throws(Failure) -> R)
        throws(Failure) -> R
    {
        guard bytes.count < Int(Int32.max) else { throw .argumentTooLarge }
        let result = bytes.withUnsafeBufferPointer { p -> Result<R, Failure> in
            Result { () throws(Failure) -> R in
                try body(mdoc_lf_foreign_bytes(len: Int32(bytes.count), data: p.baseAddress))
            }
        }
        return try result.get()
    }

    private static func bytes(_ b: mdoc_lf_rust_buffer) -> [UInt8] {
        guard let data = b.data, b.len > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(b.len)))
    }

    private static func bigEndian(_ v: Int32) -> [UInt8] {
        let u = UInt32(bitPattern: v)
        return [UInt8(u >> 24), UInt8(u >> 16 & 0xff), UInt8(u >> 8 & 0xff), UInt8(u & 0xff)]
    }

    private static func readInt32(_ b: [UInt8], at i: Int) -> Int32 {
        Int32(bitPattern: UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3]))
    }

    /// `&[String]`: a count, then each string as a length and its UTF-8.
    private static func stringList(_ strings: [String]) -> [UInt8] {
        var out = bigEndian(Int32(strings.count))
        for s in strings { out += bigEndian(Int32(s.utf8.count)) + Array(s.utf8) }
        return out
    }
}
