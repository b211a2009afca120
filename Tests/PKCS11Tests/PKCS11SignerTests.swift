import CryptoCore
import Foundation
import Testing
import TestSupport
import TestWorld
@testable import MdocCBOR
@testable import PKCS11

/// The PKCS#11 signer on SoftHSM2: keys born in the token and imported, every way resolving can fail,
/// and every way the token can fail while signing (through the fault-injecting module).
@Suite("PKCS#11 signer (SoftHSM2)", .enabled(if: TokenContext.runnable, TokenContext.skipNote))
struct PKCS11SignerTests {
    typealias A = PKCS11Module.AttributeType
    static let message = Array("a Sig_structure stands here".utf8)

    /// Verifies `signature` over `message` with the signer's public key.
    static func verifies(_ s: PKCS11Signer, _ signature: [UInt8], _ message: [UInt8] = message) -> Bool {
        (try? COSESign1.verify(signature: signature, over: message, algorithm: s.algorithm, key: s.publicKey)) != nil
    }

    /// Runs `body` on a logged-in read-write session of the token `uri` names.
    static func withSession(_ uri: PKCS11URI, _ body: (PKCS11Module, UInt) throws -> Void) throws {
        let sessions = try TokenSessions.forURI(uri)
        var failure: (any Error)?
        try sessions.withReadWriteSession(pin: uri.pinSource) { (s) throws(PKCS11Error) in
            do { try body(sessions.module, s) } catch let e as PKCS11Error { throw e } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Expects `body` to throw a `PKCS11Error` with `code` whose text contains `detail`.
    static func expectFailure(
        _ code: PKCS11Error.Code, _ detail: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) {
        do {
            try body()
            Issue.record("expected \(code): \(detail)", sourceLocation: sourceLocation)
        } catch let e as PKCS11Error {
            #expect(e.code == code && e.description.contains(detail), "\(e)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("Keys born in the token on P-256, P-384 and P-521 sign as COSE wants; the private key cannot be read")
    func curves() throws {
        let token = try TokenContext.newToken("curves")
        for (curve, alg) in [(COSEKey.Curve.p256, COSEAlgorithm.es256), (.p384, .es384), (.p521, .es512)] {
            let (uri, key) = try PKCS11KeyGeneration.generate(token.uri(object: "device-\(curve)"), curve: curve)
            #expect(uri.id?.count == 16 && key.curve == curve)
            let signer = try PKCS11Signer(uri: uri)
            #expect(signer.algorithm == alg && signer.publicKey == key)
            let signature = try signer.sign(Self.message)
            #expect(signature.count == 2 * curve.coordinateSize && Self.verifies(signer, signature))
            #expect(!Self.verifies(signer, signature, Self.message + [0]))
            // Resolving again by the URI's text finds the same key.
            #expect(try PKCS11Signer(uri: uri.string).publicKey == key)
            try Self.withSession(uri) { m, s in
                let handle = try m.findObjects(
                    s, [.ulong(A.objectClass, PKCS11Module.ObjectClass.privateKey), .bytes(A.id, uri.id!)])
                #expect(handle.count == 1)
                let a = try m.attributes(s, object: handle[0], [A.value, A.sensitive, A.extractable])
                #expect(a[A.value] == nil && a[A.sensitive] == [1] && a[A.extractable] == [0])
            }
        }
        Self.expectFailure(.keyAmbiguous, "exists in the token") {
            _ = try PKCS11KeyGeneration.generate(token.uri(object: "device-p256"))
        }
        Self.expectFailure(.keyUnsuitable, "P-256, P-384 or P-521") {
            _ = try PKCS11KeyGeneration.generate(token.uri(object: "ed"), curve: .ed25519)
        }
    }

    @Test(
        "An imported key resolves by label, by id or both; its public half from the public object or CKA_PUBLIC_KEY_INFO"
    )
    func importedKeys() throws {
        let token = try TokenContext.newToken("imported")
        let software = try SoftwareSigner.generate()
        let uri = try TokenContext.importKey(software, into: token, label: "held")
        for variant in [
            token.uri(object: "held"), token.uri(object: "held", id: uri.id),
            PKCS11URI(
                token: token.label, object: nil, id: uri.id, modulePath: token.modulePath,
                pinSource: .file(token.pinFile)),
        ] {
            let s = try PKCS11Signer(uri: variant)
            #expect(try s.publicKey == software.publicKey && Self.verifies(s, s.sign(Self.message)))
        }
        // A private key with no public key object: SoftHSM2 answers CKA_PUBLIC_KEY_INFO, which is used.
        let lone = try SoftwareSigner.generate()
        var scalar = try lone.privateKey.exportSecret()
        defer { SecureBytes.cleanse(&scalar) }
        try Self.withSession(token.uri(object: "held")) { m, s in
            _ = try m.createObject(
                s,
                [
                    .ulong(A.objectClass, PKCS11Module.ObjectClass.privateKey),
                    .ulong(A.keyType, PKCS11Module.ObjectClass.ecKeyType), .bool(A.token, true),
                    .bytes(A.label, Array("lone".utf8)), .bool(A.sign, true), .bool(A.sensitive, true),
                    .bytes(A.ecParams, PKCS11Signer.ecParams(.p256)!), .bytes(A.value, scalar),
                ])
        }
        do {
            let s = try PKCS11Signer(uri: token.uri(object: "lone"))
            #expect(try s.publicKey == lone.publicKey && Self.verifies(s, s.sign(Self.message)))
            print("PKCS#11: a private key without a public object resolved through CKA_PUBLIC_KEY_INFO")
        } catch let e as PKCS11Error {
            // A token without CKA_PUBLIC_KEY_INFO: refused as having no public half, never guessed.
            #expect(e.code == .keyUnsuitable && e.detail.contains("no readable public key"))
            print("PKCS#11: this SoftHSM2 has no CKA_PUBLIC_KEY_INFO; the lone private key is refused")
        }
    }

    @Test("Every way resolving fails is typed: module, token, PIN, key, curve, type, pairing")
    func resolveFailures() throws {
        let sandbox = try TokenContext.sandbox()
        let token = try TokenContext.newToken("failures")
        let good = try TokenContext.importKey(try SoftwareSigner.generate(), into: token, label: "good")
        var rows = 0
        func uri(_ edit: (inout PKCS11URI) -> Void) -> PKCS11URI {
            var u = good
            edit(&u)
            return u
        }
        func expect(
            _ code: PKCS11Error.Code, _ detail: String, _ u: PKCS11URI,
            // The module rows' files live in the sandbox and libcbor's directory: admitted here.
            directories: [String] = PKCS11ModuleDirectories.system + [
                sandbox.directory, "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
            ],
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            rows += 1
            Self.expectFailure(code, detail, sourceLocation: sourceLocation) {
                _ = try PKCS11Signer(uri: u, moduleDirectories: directories)
            }
        }
        // The module: only from a configured module directory (a snapshot's module-path is trusted
        // input, and a library's constructor runs on load).
        expect(
            .moduleUnavailable, "not in a configured PKCS#11 module directory",
            uri { $0.modulePath = URL(fileURLWithPath: token.modulePath).resolvingSymlinksInPath().path },
            directories: ["/nonexistent"])
        expect(.moduleUnavailable, "does not exist", uri { $0.modulePath = "/nonexistent/libpkcs11.so" })
        let text = sandbox.directory + "/not-a-library.so"
        try? Data("not an ELF file".utf8).write(to: URL(fileURLWithPath: text))
        expect(.moduleUnavailable, "not a loadable library", uri { $0.modulePath = text })
        let libcbor = ["/usr/lib/x86_64-linux-gnu/libcbor.so.0.8", "/usr/lib/aarch64-linux-gnu/libcbor.so.0.8"].first {
            FileManager.default.fileExists(atPath: $0)
        }
        if let libcbor { expect(.notAModule, "no C_GetFunctionList", uri { $0.modulePath = libcbor }) }
        let writable = sandbox.directory + "/writable.so"
        if !FileManager.default.fileExists(atPath: writable) {
            try FileManager.default.copyItem(
                atPath: URL(fileURLWithPath: token.modulePath).resolvingSymlinksInPath().path, toPath: writable)
        }
        chmod(writable, 0o666)
        expect(.moduleUnavailable, "writable by group or others", uri { $0.modulePath = writable })
        expect(.moduleUnavailable, "must be absolute", uri { $0.modulePath = "relative.so" })
        expect(.invalidURI, "no module-path", uri { $0.modulePath = nil })
        // The token.
        expect(.tokenAbsent, "no slot holds a token", uri { $0.token = "no-such-token" })
        expect(.tokenAbsent, "no slot holds a token", uri { $0.serial = "0000" })
        expect(.tokenAbsent, "library attributes", uri { $0.libraryManufacturer = "Someone Else" })
        expect(.keyAmbiguous, "more than one token matches", uri { $0.token = nil })
        // The PIN (a token this process never logged in to, so every login really happens).
        let fresh = try TokenContext.newToken("fresh")
        let freshKey = try PKCS11KeyGeneration.generate(fresh.uri(object: "k")).uri
        // ^ generation logs in: use a second process-fresh token for the PIN rows.
        _ = freshKey
        let cold = try TokenContext.newToken("cold")
        let wrong = sandbox.directory + "/wrong-pin-\(UInt32.random(in: 0...UInt32.max))"
        try SoftHSM2Sandbox.writePrivate(Array("not-the-pin\n".utf8), to: wrong)
        var coldURI = cold.uri(object: "k")
        coldURI.pinSource = .file(wrong)
        expect(.pinIncorrect, "refused the PIN", coldURI)
        expect(.pinIncorrect, "CKR_PIN_INCORRECT", coldURI)
        coldURI.pinSource = .file(sandbox.directory + "/no-such-pin-file")
        expect(.pinUnavailable, "cannot be opened", coldURI)
        let open = sandbox.directory + "/open-pin-\(UInt32.random(in: 0...UInt32.max))"
        try Data("1234".utf8).write(to: URL(fileURLWithPath: open))
        chmod(open, 0o644)
        coldURI.pinSource = .file(open)
        expect(.pinUnavailable, "readable by no one else", coldURI)
        let empty = sandbox.directory + "/empty-pin-\(UInt32.random(in: 0...UInt32.max))"
        try SoftHSM2Sandbox.writePrivate(Array("\n".utf8), to: empty)
        coldURI.pinSource = .file(empty)
        expect(.pinUnavailable, "empty", coldURI)
        let long = sandbox.directory + "/long-pin-\(UInt32.random(in: 0...UInt32.max))"
        try SoftHSM2Sandbox.writePrivate([UInt8](repeating: 0x31, count: 300), to: long)
        coldURI.pinSource = .file(long)
        expect(.pinUnavailable, "longer than 256", coldURI)
        coldURI.pinSource = .environment("MDOC_TEST_PIN_NOT_SET_\(UInt32.random(in: 0...UInt32.max))")
        expect(.pinUnavailable, "not set", coldURI)
        coldURI.pinSource = nil
        expect(.pinUnavailable, "needs a PIN", coldURI)
        // After the wrong PINs the right one still works: nothing was locked or cached.
        let coldKey = try PKCS11KeyGeneration.generate(cold.uri(object: "k")).uri
        let coldSigner = try PKCS11Signer(uri: coldKey)
        #expect(Self.verifies(coldSigner, try coldSigner.sign(Self.message)))
        // An environment variable works as a PIN source.
        let pin = try String(contentsOfFile: fresh.pinFile, encoding: .utf8)
        setenv("MDOC_TEST_FRESH_PIN", pin, 1)
        var viaEnv = freshKey
        viaEnv.pinSource = .environment("MDOC_TEST_FRESH_PIN")
        #expect(try PKCS11Signer(uri: viaEnv).publicKey == (try PKCS11Signer(uri: freshKey)).publicKey)
        // The key.
        expect(.keyNotFound, "no private key", uri { $0.object = "missing" })
        expect(.keyNotFound, "no private key", uri { $0.id = [9, 9, 9] })
        _ = try TokenContext.importKey(try SoftwareSigner.generate(), into: token, label: "twin")
        _ = try TokenContext.importKey(try SoftwareSigner.generate(), into: token, label: "twin")
        expect(
            .keyAmbiguous, "more than one private key",
            uri {
                $0.object = "twin"
                $0.id = nil
            })
        // Keys that are there but unusable, created object by object: not allowed to sign, on another
        // curve (secp256k1, generated in the token), of another type (RSA test numbers), paired with
        // another key's public object, with a public point off the curve, with a P-384 public object.
        let mine = try SoftwareSigner.generate()
        let other = try SoftwareSigner.generate()
        let big = try SoftwareSigner.generate(curve: .p384)
        var scalar = try mine.privateKey.exportSecret()
        defer { SecureBytes.cleanse(&scalar) }
        func privateKey(_ label: String, sign: Bool = true, type: UInt = PKCS11Module.ObjectClass.ecKeyType)
            -> [PKCS11Module.Attribute]
        {
            [
                .ulong(A.objectClass, PKCS11Module.ObjectClass.privateKey), .ulong(A.keyType, type),
                .bool(A.token, true), .bytes(A.label, Array(label.utf8)), .bytes(A.id, Array(label.utf8)),
                .bool(A.sign, sign),
            ]
        }
        func ecPrivateKey(_ label: String, sign: Bool = true) -> [PKCS11Module.Attribute] {
            privateKey(label, sign: sign) + [
                .bytes(A.ecParams, PKCS11Signer.ecParams(.p256)!), .bytes(A.value, scalar),
            ]
        }
        func publicKey(_ label: String, _ curve: COSEKey.Curve, point: [UInt8]) -> [PKCS11Module.Attribute] {
            [
                .ulong(A.objectClass, PKCS11Module.ObjectClass.publicKey),
                .ulong(A.keyType, PKCS11Module.ObjectClass.ecKeyType), .bool(A.token, true),
                .bytes(A.label, Array(label.utf8)), .bytes(A.id, Array(label.utf8)),
                .bytes(A.ecParams, PKCS11Signer.ecParams(curve)!),
                .bytes(A.ecPoint, [0x04, UInt8(point.count)] + point),
            ]
        }
        try Self.withSession(good) { m, s in
            _ = try m.createObject(s, ecPrivateKey("nosign", sign: false))
            _ = try m.generateECKeyPair(
                s,
                publicTemplate: [
                    .ulong(A.objectClass, PKCS11Module.ObjectClass.publicKey), .bool(A.token, true),
                    .bytes(A.label, Array("k1".utf8)), .bytes(A.id, Array("k1".utf8)),
                    .bytes(A.ecParams, [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x0A]),
                ],
                privateTemplate: privateKey("k1") + [.bool(A.sensitive, true)])
            _ = try m.createObject(
                s,
                privateKey("rsa", type: 0) + [
                    .bytes(0x120, [0x0C, 0xA1]), .bytes(0x122, [0x11]), .bytes(0x123, [0x0A, 0xC1]),
                ])
            _ = try m.createObject(s, ecPrivateKey("paired-wrong"))
            _ = try m.createObject(
                s, publicKey("paired-wrong", .p256, point: [0x04] + other.publicKey.x + other.publicKey.y!))
            _ = try m.createObject(s, ecPrivateKey("off-curve"))
            _ = try m.createObject(s, publicKey("off-curve", .p256, point: [0x04] + [UInt8](repeating: 1, count: 64)))
            _ = try m.createObject(s, ecPrivateKey("mixed"))
            _ = try m.createObject(s, publicKey("mixed", .p384, point: [0x04] + big.publicKey.x + big.publicKey.y!))
        }
        for (code, detail, label) in [
            (PKCS11Error.Code.keyUnsuitable, "not allowed to sign", "nosign"),
            (.keyUnsuitable, "not P-256, P-384 or P-521", "k1"), (.keyUnsuitable, "not an EC key", "rsa"),
            (.keyMismatch, "does not sign for the public key", "paired-wrong"),
            (.keyUnsuitable, "not a valid point", "off-curve"), (.keyMismatch, "another curve", "mixed"),
        ] {
            expect(code, detail, token.uri(object: label))
        }
        // No message names the PIN, the PIN file or the variable.
        print("PKCS#11 resolve failures: \(rows) rows")
    }

    @Test(
        "A token failing at login or while signing is typed, retried only when a session went stale, and never returns a bad signature"
    )
    func tokenFaults() throws {
        let modes = [
            "pin-locked", "sign-error", "sign-removed", "sign-error-after-1", "sign-stale-once", "sign-short",
            "cant-lock", "version-9", "pass",
        ]
        var paths = [String: String]()
        for m in modes {
            guard let p = try TokenContext.faultModule(m) else {
                #expect(!Prerequisites.required, "the fault module was not built beside the tests")
                print("NOTICE: libmdoc-p11-fault.so not built; PKCS#11 fault rows skipped")
                return
            }
            paths[m] = p
        }
        let token = try TokenContext.newToken("faults")
        let software = try SoftwareSigner.generate()
        let base = try TokenContext.importKey(software, into: token, label: "k")
        func through(_ mode: String) -> PKCS11URI {
            var u = base
            u.modulePath = paths[mode]
            return u
        }
        // A module outside the configured module directories is never loaded (its constructor never runs).
        let dirs = try TokenContext.faultModuleDirectories()
        Self.expectFailure(.moduleUnavailable, "not in a configured PKCS#11 module directory") {
            _ = try PKCS11Signer(uri: through("pass"))
        }
        // The pass-through module resolves and signs like SoftHSM2 itself.
        let plain = try PKCS11Signer(uri: through("pass"), moduleDirectories: dirs)
        #expect(Self.verifies(plain, try plain.sign(Self.message)))
        // Resolving: the key check's signature fails, the module lies about its version.
        Self.expectFailure(.tokenFailed, "CKR_DEVICE_ERROR") {
            _ = try PKCS11Signer(uri: through("sign-error"), moduleDirectories: dirs)
        }
        Self.expectFailure(.tokenFailed, "CKR_DEVICE_REMOVED") {
            _ = try PKCS11Signer(uri: through("sign-removed"), moduleDirectories: dirs)
        }
        Self.expectFailure(.notAModule, "major version") {
            _ = try PKCS11Signer(uri: through("version-9"), moduleDirectories: dirs)
        }
        // A locked PIN (SoftHSM2 itself never locks one): a token this process has not logged in to.
        let cold = try TokenContext.newToken("locked")
        var locked = cold.uri(object: "k")
        locked.modulePath = paths["pin-locked"]
        Self.expectFailure(.pinLocked, "CKR_PIN_LOCKED") { _ = try PKCS11Signer(uri: locked, moduleDirectories: dirs) }
        // Mid-sign: the key check passes, the next signature fails: signingFailed with the step.
        let failing = try PKCS11Signer(uri: through("sign-error-after-1"), moduleDirectories: dirs)
        #expect {
            _ = try failing.sign(Self.message)
        } throws: { ($0 as? COSEError)?.code == .signingFailed && "\($0)".contains("CKR_DEVICE_ERROR") }
        // A stale session is replaced once and the signature succeeds.
        let stale = try PKCS11Signer(uri: through("sign-stale-once"), moduleDirectories: dirs)
        #expect(Self.verifies(stale, try stale.sign(Self.message)))
        // A signature of the wrong length is never returned.
        Self.expectFailure(.tokenFailed, "could not sign a check message") {
            _ = try PKCS11Signer(uri: through("sign-short"), moduleDirectories: dirs)
        }
        // A module that cannot lock is driven single-threaded, and still works from many threads.
        let serial = try PKCS11Signer(uri: through("cant-lock"), moduleDirectories: dirs)
        let ok = LockedValue(0)
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            if let sig = try? serial.sign(Self.message), Self.verifies(serial, sig) { ok.withLock { $0 += 1 } }
        }
        #expect(ok.withLock { $0 } == 64)
        print("PKCS#11 fault modes: \(modes.count) exercised")
    }

    @Test("Concurrent signing takes a session each from a bounded pool: 4 threads x 250 signatures, all valid")
    func concurrentSigning() throws {
        let token = try TokenContext.newToken("concurrent")
        let uri = try PKCS11KeyGeneration.generate(token.uri(object: "k")).uri
        let signer = try PKCS11Signer(uri: uri)
        let valid = LockedValue(0)
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<250 {
                let m = Self.message + [UInt8(t), UInt8(i & 0xFF)]
                if let sig = try? signer.sign(m), Self.verifies(signer, sig, m) { valid.withLock { $0 += 1 } }
            }
        }
        #expect(valid.withLock { $0 } == 1000)
        let sessions = try TokenSessions.forURI(uri)
        #expect(sessions.capacity == TokenSessions.defaultCapacity)
    }
}

/// How a token's public key encodings are read (no token needed).
@Suite("PKCS#11 public key encodings")
struct PKCS11EncodingTests {
    @Test("CKA_EC_POINT is read wrapped in an OCTET STRING or bare; an EC SubjectPublicKeyInfo names its curve")
    func points() throws {
        for curve in [COSEKey.Curve.p256, .p384, .p521] {
            let key = try SoftwareSigner.generate(curve: curve).publicKey
            let point = [0x04] + key.x + key.y!
            let wrapped = [0x04] + (point.count < 128 ? [UInt8(point.count)] : [0x81, UInt8(point.count)]) + point
            #expect(PKCS11Signer.uncompressedPoint(ecPoint: wrapped, curve: curve) == point)
            #expect(PKCS11Signer.uncompressedPoint(ecPoint: point, curve: curve) == point)
            #expect(PKCS11Signer.uncompressedPoint(ecPoint: Array(wrapped.dropLast()), curve: curve) == nil)
            #expect(PKCS11Signer.uncompressedPoint(ecPoint: [0x04, 0x02] + point.prefix(2), curve: curve) == nil)
        }
        // A P-256 SubjectPublicKeyInfo: SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING }.
        let key = try SoftwareSigner.generate().publicKey
        let point = [0x04] + key.x + key.y!
        let spki = h("3059301306072a8648ce3d020106082a8648ce3d030107034200") + point
        #expect(PKCS11Signer.uncompressedPoint(subjectPublicKeyInfo: spki, curve: .p256) == point)
        #expect(PKCS11Signer.uncompressedPoint(subjectPublicKeyInfo: spki, curve: .p384) == nil)
        var otherCurve = spki
        otherCurve[22] ^= 1  // the curve OID's last byte
        #expect(PKCS11Signer.uncompressedPoint(subjectPublicKeyInfo: otherCurve, curve: .p256) == nil)
        #expect(PKCS11Signer.curve(ecParams: PKCS11Signer.ecParams(.p521)!) == .p521)
        #expect(PKCS11Signer.curve(ecParams: [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x0A]) == nil)
    }
}
