import DigitalCredentials
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR
import PKCS11

/// `mdoc-respond context`: the host app's side of the credential context.
enum ContextCommand {
    static let help = """
        usage: mdoc-respond context <action> --context DIR [options]

          init [--test-data]                     create an empty context in DIR; --test-data: a private,
                                                 writable copy of the built-in test context instead
                                                 (test credentials and test keys, for trying things out)
          import --issuer-signed FILE --device-key FILE [--id ID] [--doctype D]...
                                                 add a credential; the key is copied to DIR/keys/ (0600)
          import --issuer-signed FILE --device-key 'pkcs11:URI' --pkcs11-module PATH
                 [--pin-file FILE | --pin-env VAR] [--id ID] [--doctype D]...
                                                 add a credential whose device key stays in a PKCS#11
                                                 token (RFC 7512 URI: token=…;object=… or id=…); the
                                                 PIN is read from the file or variable at each login,
                                                 never stored in the context
          device-key new --pkcs11-module PATH --token LABEL --label NAME [--id HEX]
                 [--curve P-256|P-384|P-521] [--pin-file FILE | --pin-env VAR] [--json]
                                                 create a device key in a token (no --context needed);
                                                 prints its URI, COSE_Key and PEM for the issuer
          list [--json]                          credentials with their registration metadata
          remove ID | cancel ID | reinstate ID   change one credential
          policy [--allow-authority SKI_HEX ... | --any] [--require-reader-auth | --no-require-reader-auth]
                 [--require-trusted-reader | --no-require-trusted-reader]
                                                 who may ask: by default any reader, trusted or not (the
                                                 verdict is reported); --allow-authority refuses readers of
                                                 other authorities; --require-trusted-reader refuses signed
                                                 requests from untrusted readers; --require-reader-auth
                                                 refuses any DocRequest not signed by a trusted reader
          trust add FILE [--purpose relying-party|mdoc-reader]
                                         add a reader trust anchor (PEM or DER), or set its purpose:
                                         relying-party (default) trusts request signers and access
                                         certificates chaining to it without the ISO reader EKU;
                                         mdoc-reader requires it (EKU 1.0.18013.5.1.6). A certificate
                                         that can never anchor a chain (not a CA, or a keyUsage
                                         without keyCertSign) is refused (context.anchorCannotAnchor)
          trust remove FILE                      remove a reader trust anchor

        Every change is made under the context's writer lock (one writer at a time, across processes;
        --lock-timeout SECONDS, default 10, then error[contextBusy]), validates all credentials and
        device keys, and rewrites context.cbor atomically (mode 0600). Key files are created 0600 from
        their first byte; key files no credential references are removed. A default id (credential-N)
        is never reused. Success is printed only once the change is on disk.
        exit codes: 0 ok, 1 refused (invalid credential, key or id), 2 usage, 3 I/O, lock or context problem
        """

    static func run(_ args: [String]) {
        if args.first == "device-key" {
            newDeviceKey(Array(args.dropFirst()))
            return
        }
        guard let action = args.first, !action.hasPrefix("-") else {
            if args.contains("--help") || args.contains("-h") {
                print(help)
                exit(Exit.ok)
            }
            fail(Exit.usage, "usage", "context needs an action; see 'mdoc-respond context --help'")
        }
        let o = Options(
            Array(args.dropFirst()),
            flags: [
                "--json", "--any", "--require-reader-auth", "--no-require-reader-auth", "--test-data",
                "--require-trusted-reader", "--no-require-trusted-reader",
            ], help: help)
        o.check(allowed: [
            "--context", "--issuer-signed", "--device-key", "--id", "--doctype", "--allow-authority", "--lock-timeout",
            "--pkcs11-module", "--pin-file", "--pin-env", "--purpose",
        ])
        let dir = URL(fileURLWithPath: o.require("--context"))
        var lockTimeout = CredentialContext.defaultLockTimeout
        if let t = o.value("--lock-timeout") {
            guard let v = Double(t), v >= 0, v <= 3600 else {
                fail(Exit.usage, "usage", "--lock-timeout takes seconds (0-3600)")
            }
            lockTimeout = v
        }
        /// One change under the writer lock; prints `message` only once the new snapshot is on disk.
        func change(
            _ message: @autoclosure () -> String, create: Bool = false,
            _ body: (inout CredentialContext.Transaction) throws(PresentmentError) -> Void
        ) {
            do {
                try CredentialContext.update(
                    at: dir, create: create, lockTimeout: lockTimeout, keyResolver: BuiltIn.keyResolver(dir), body)
                print(message())
            } catch {
                let io: Set<PresentmentError.Code> = [
                    .contextUnavailable, .contextBusy, .contextInsecure, .contextCorrupt,
                ]
                fail(io.contains(error.code) ? Exit.io : Exit.refused, error.code.rawValue, error.detail)
            }
        }
        func index(_ entries: [CredentialContext.Entry], _ id: String?) throws(PresentmentError) -> Int {
            guard let id, let i = entries.firstIndex(where: { $0.id == id }) else {
                throw PresentmentError(ContextRule.unknownCredential)
            }
            return i
        }
        switch action {
        case "init":
            if (try? CredentialContext.load(from: dir)) != nil {
                fail(Exit.refused, "contextExists", "a context already exists in that directory")
            }
            guard o.flags.contains("--test-data") else {
                change("initialized an empty context", create: true) { tx throws(PresentmentError) in
                    guard tx.entries.isEmpty else {
                        throw PresentmentError(ContextRule.contextExists)
                    }
                }
                return
            }
            // A private, writable copy of the built-in test context (test credentials and test keys,
            // published on purpose): each key written 0600 from its first byte, as an import does.
            let builtIn = BuiltIn.context(nil)
            let keys = BuiltIn.contextDirectory.path + "/"
            change("initialized a copy of the built-in test context (test keys only)", create: true) {
                tx throws(PresentmentError) in
                guard tx.entries.isEmpty else { throw PresentmentError(ContextRule.contextExists) }
                for var entry in builtIn.entries {
                    guard
                        var pem = FileManager.default.contents(atPath: keys + entry.deviceKeyReference).map(Array.init)
                    else { throw PresentmentError(KeyRule.fileMissing) }
                    defer { for i in pem.indices { pem[i] = 0 } }
                    entry.deviceKeyReference = try tx.storeDeviceKey(pem, name: entry.id)
                    tx.entries.append(entry)
                }
                tx.readerTrust = builtIn.readerTrust
            }
        case "import":
            let issuerSigned = Input.read(o.require("--issuer-signed"))
            let keyArgument = o.require("--device-key")
            if let id = o.value("--id"), !CredentialContext.isValidCredentialID(id) {
                fail(Exit.refused, "invalidId", "the id must be 1-64 characters of [A-Za-z0-9-_]")
            }
            // The device key: a URI naming a key in a token (stored as the reference; validation
            // resolves it and checks it against the MSO deviceKey), or a key file copied into keys/.
            let tokenReference: String?
            var pem = [UInt8]()
            defer { for i in pem.indices { pem[i] = 0 } }
            if PKCS11URI.isPKCS11(keyArgument) {
                tokenReference = tokenKeyReference(o)
            } else {
                for f in ["--pkcs11-module", "--pin-file", "--pin-env"] where o.value(f) != nil {
                    fail(Exit.usage, "usage", "\(f) goes with a pkcs11: device key URI")
                }
                tokenReference = nil
                var keyBytes = Input.read(keyArgument)
                defer { for i in keyBytes.indices { keyBytes[i] = 0 } }
                guard let signer = try? SoftwareSigner(encodedPrivateKey: keyBytes), let p = try? signer.pkcs8PEM()
                else {
                    fail(
                        Exit.refused, "keyUnavailable", "the device key is not a PKCS#8 P-256/P-384/P-521/Ed25519 key")
                }
                pem = Array(p.utf8)
            }
            var imported = ""
            change("imported \(imported)\(tokenReference == nil ? "" : " (device key in a PKCS#11 token)")") {
                tx throws(PresentmentError) in
                let id = o.value("--id") ?? tx.newCredentialID()
                guard !tx.entries.contains(where: { $0.id == id }) else {
                    throw PresentmentError(ContextRule.duplicateCredential)
                }
                let reference: String
                if let tokenReference {
                    reference = tokenReference
                } else {
                    reference = try tx.storeDeviceKey(pem, name: id)
                }
                tx.entries.append(
                    .init(
                        id: id, docTypes: o.values["--doctype"], issuerSigned: issuerSigned,
                        deviceKeyReference: reference))
                imported = id
            }
        case "list":
            let current: CredentialContext
            do {
                guard let c = try CredentialContext.load(from: dir) else {
                    fail(Exit.io, "contextUnavailable", "no context in that directory (run context init)")
                }
                current = c
            } catch { fail(Exit.io, error) }
            let trust = current.readerTrust
            let regs = current.credentials
            // Listing indexes every credential: one whose stored bytes fail is reported, not listed.
            var counts = [String: Int]()
            do {
                for c in regs { counts[c.id] = try c.elements.count }
            } catch { fail(Exit.io, error) }
            if o.flags.contains("--json") {
                let items = regs.map { c in
                    "{\"id\":\(jsonString(c.id)),\"docTypes\":[\(c.docTypes.map(jsonString).joined(separator: ","))],\"cancelled\":\(c.isCancelled),"
                        + "\"validFrom\":\(jsonString(MdocDate.formatDateTime(c.validFrom))),\"validUntil\":\(jsonString(MdocDate.formatDateTime(c.validUntil))),"
                        + "\"elements\":\(counts[c.id] ?? 0),\"deviceKey\":\(jsonString(shownKey(c.deviceKeyReference))),\"registration\":{\"credentialId\":\(jsonString(c.registration.credentialID)),"
                        + "\"docType\":\(jsonString(c.registration.docType)),\"invalidationDate\":\(jsonString(MdocDate.formatDateTime(c.registration.invalidationDate)))}}"
                }
                print("[" + items.joined(separator: ",") + "]")
            } else {
                for c in regs {
                    print(
                        "\(safe(c.id))\t\(c.docTypes.map(safe).joined(separator: ","))\t\(counts[c.id] ?? 0) elements\tvalid \(MdocDate.formatDateTime(c.validFrom)) … \(MdocDate.formatDateTime(c.validUntil))\tkey \(safe(shownKey(c.deviceKeyReference)))\(c.isCancelled ? "\tCANCELLED" : "")"
                    )
                }
                let auth: String
                switch trust.authorities {
                case .any: auth = "any"
                case .only(let l): auth = l.isEmpty ? "any" : l.map { hex($0) }.joined(separator: ",")
                }
                for (der, purpose) in zip(trust.anchors.der, trust.anchorPurposes) {
                    let subject = (try? Certificate(der: der)).map { safe($0.subject) } ?? "(not a certificate)"
                    print("anchor\t\(trust.effectivePurposeArgument(purpose))\t\(subject)")
                }
                print(
                    "reader trust: \(trust.anchors.der.count) anchor(s); authorities: \(auth); trusted reader required: \(trust.requireTrustedReader); reader authentication required: \(trust.requireReaderAuthentication)"
                )
            }
        case "remove":
            change("removed") { tx throws(PresentmentError) in
                tx.entries.remove(at: try index(tx.entries, o.positionals.first))
            }
        case "cancel", "reinstate":
            change(action == "cancel" ? "cancelled" : "reinstated") { tx throws(PresentmentError) in
                tx.entries[try index(tx.entries, o.positionals.first)].isCancelled = action == "cancel"
            }
        case "policy":
            var authorities: AuthorityPolicy?
            if o.flags.contains("--any") {
                authorities = .any
            } else if let list = o.values["--allow-authority"] {
                var skis = [[UInt8]]()
                for h in list {
                    guard let b = Input.hexBytes(h), !b.isEmpty else {
                        fail(Exit.usage, "usage", "--allow-authority takes a hex key identifier")
                    }
                    skis.append(b)
                }
                authorities = .only(skis)
            }
            change("policy updated") { tx in
                if let authorities { tx.readerTrust.authorities = authorities }
                if o.flags.contains("--require-reader-auth") { tx.readerTrust.requireReaderAuthentication = true }
                if o.flags.contains("--no-require-reader-auth") { tx.readerTrust.requireReaderAuthentication = false }
                if o.flags.contains("--require-trusted-reader") { tx.readerTrust.requireTrustedReader = true }
                if o.flags.contains("--no-require-trusted-reader") { tx.readerTrust.requireTrustedReader = false }
            }
        case "trust":
            guard o.positionals.count == 2 else { fail(Exit.usage, "usage", "trust add|remove FILE") }
            let cert = Input.certificate(Input.read(o.positionals[1]))
            if o.positionals[0] == "add" {
                // A hand-added anchor is a relying party's CA unless the holder says it is a reader CA.
                let text = o.value("--purpose") ?? AnchorPurpose.relyingParty.argument
                guard let purpose = AnchorPurpose(argument: text) else {
                    fail(Exit.usage, "usage", "--purpose must be relying-party or mdoc-reader")
                }
                change("trust anchor added (\(purpose.argument)): \(safe(cert.subject))") {
                    tx throws(PresentmentError) in
                    try tx.readerTrust.addAnchor(cert, purpose: purpose)
                }
            } else if o.positionals[0] == "remove" {
                change("trust anchor removed") { tx in tx.readerTrust.removeAnchor(der: cert.der) }
            } else {
                fail(Exit.usage, "usage", "trust add|remove FILE")
            }
        default:
            fail(Exit.usage, "usage", "unknown context action '\(action)'")
        }
    }

    /// The `pkcs11:` URI of `--device-key` completed with `--pkcs11-module` and the PIN source, as the
    /// context stores it. A PIN value in the URI is refused; the PIN file path is made absolute.
    static func tokenKeyReference(_ o: Options) -> String {
        var uri: PKCS11URI
        do { uri = try PKCS11URI(parsing: o.require("--device-key")) } catch {
            fail(Exit.usage, "usage", "the device key URI is invalid: \(error.detail)")
        }
        if let module = o.value("--pkcs11-module") {
            if let given = uri.modulePath, given != module {
                fail(Exit.usage, "usage", "--pkcs11-module differs from the URI's module-path")
            }
            uri.modulePath = absolutePath(module)
        }
        guard uri.modulePath != nil else {
            fail(Exit.usage, "usage", "a pkcs11: device key needs --pkcs11-module (or module-path in the URI)")
        }
        if let source = pinSource(o) {
            guard uri.pinSource == nil || uri.pinSource == source else {
                fail(Exit.usage, "usage", "the PIN source is given twice, differently")
            }
            uri.pinSource = source
        }
        return uri.string
    }

    /// `--pin-file F` or `--pin-env VAR` (exclusive), or nil.
    static func pinSource(_ o: Options) -> PINSource? {
        switch (o.value("--pin-file"), o.value("--pin-env")) {
        case (let f?, nil): return .file(absolutePath(f))
        case (nil, let v?):
            guard PKCS11URI.isEnvironmentName(v) else {
                fail(Exit.usage, "usage", "--pin-env takes an environment variable name")
            }
            return .environment(v)
        case (nil, nil): return nil
        default: fail(Exit.usage, "usage", "--pin-file and --pin-env are exclusive")
        }
    }

    static func absolutePath(_ p: String) -> String {
        p.hasPrefix("/") ? p : FileManager.default.currentDirectoryPath + "/" + p
    }

    static let deviceKeyHelp = """
        usage: mdoc-respond context device-key new --pkcs11-module PATH --token LABEL --label NAME [--id HEX]
                                                   [--curve P-256|P-384|P-521] [--pin-file FILE | --pin-env VAR] [--json]

        Creates an EC key pair in the token (the private key sensitive and not extractable, labelled NAME,
        with id HEX or 16 random bytes) and prints the key's URI, its public key as a COSE_Key (hex) and as
        PEM: the issuer puts the public key in the credential's MSO; the holder then imports the credential
        with context import --device-key 'URI' --pkcs11-module PATH and the same PIN source.
        exit codes: 0 created, 1 refused (token, PIN, a key with that label or id exists), 2 usage
        """

    /// `context device-key new`.
    static func newDeviceKey(_ args: [String]) {
        guard args.first == "new" else {
            if args.contains("--help") || args.contains("-h") {
                print(deviceKeyHelp)
                exit(Exit.ok)
            }
            fail(Exit.usage, "usage", "device-key takes the action new; see 'mdoc-respond context device-key --help'")
        }
        let o = Options(Array(args.dropFirst()), flags: ["--json"], help: deviceKeyHelp)
        o.check(allowed: ["--pkcs11-module", "--token", "--label", "--id", "--curve", "--pin-file", "--pin-env"])
        var uri = PKCS11URI(
            token: o.require("--token"), object: o.require("--label"),
            modulePath: absolutePath(o.require("--pkcs11-module")), pinSource: pinSource(o))
        if let h = o.value("--id") {
            guard let id = Input.hexBytes(h), (1...64).contains(id.count) else {
                fail(Exit.usage, "usage", "--id takes 1-64 bytes in hex")
            }
            uri.id = id
        }
        let curve: COSEKey.Curve
        switch o.value("--curve") ?? "P-256" {
        case "P-256": curve = .p256
        case "P-384": curve = .p384
        case "P-521": curve = .p521
        default: fail(Exit.usage, "usage", "--curve is P-256, P-384 or P-521")
        }
        do {
            let (made, key) = try PKCS11KeyGeneration.generate(uri, curve: curve)
            let pem = try key.pem()
            let name = made.keyOnly.string
            if o.flags.contains("--json") {
                print(
                    "{\"uri\":\(jsonString(name)),\"coseKey\":\(jsonString(hex(key.encoded()))),\"pem\":\(jsonString(pem))}"
                )
            } else {
                print("uri       \(name)")
                print("cose_key  \(hex(key.encoded()))")
                print(pem, terminator: "")
            }
        } catch let e as PKCS11Error {
            fail(Exit.refused, PresentmentError(KeyRule.token, underlying: e))
        } catch {
            fail(Exit.refused, "keyUnavailable", "the new key's public half cannot be encoded")
        }
    }

    /// A device key reference as listings show it: a file path as is, a `pkcs11:` URI without its PIN
    /// source's location.
    static func shownKey(_ reference: String) -> String {
        guard PKCS11URI.isPKCS11(reference) else { return reference }
        return (try? PKCS11URI(parsing: reference))?.redacted ?? "pkcs11:(unreadable URI)"
    }
}
