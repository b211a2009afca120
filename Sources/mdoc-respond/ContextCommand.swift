import AnnexC
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import MdocCBOR

/// `mdoc-respond context`: the host app's side of the credential context.
enum ContextCommand {
    static let help = """
    usage: mdoc-respond context <action> --context DIR [options]

      init                                   create an empty context in DIR
      import --issuer-signed FILE --device-key FILE [--id ID] [--doctype D]...
                                             add a credential; the key is copied to DIR/keys/ (0600)
      list [--json]                          credentials with their registration metadata
      remove ID | cancel ID | reinstate ID   change one credential
      policy [--allow-authority SKI_HEX ... | --any] [--require-reader-auth | --no-require-reader-auth]
             [--require-trusted-reader | --no-require-trusted-reader]
                                             who may ask: by default any reader, trusted or not (the
                                             verdict is reported); --allow-authority refuses readers of
                                             other authorities; --require-trusted-reader refuses signed
                                             requests from untrusted readers; --require-reader-auth
                                             refuses any DocRequest not signed by a trusted reader
      trust add FILE | trust remove FILE     add or remove a reader trust anchor (PEM or DER)

    Every change validates all credentials and rewrites context.cbor atomically (mode 0600).
    exit codes: 0 ok, 1 refused (invalid credential or key), 2 usage, 3 I/O problem
    """

    static func run(_ args: [String]) {
        guard let action = args.first, !action.hasPrefix("-") else {
            if args.contains("--help") || args.contains("-h") { print(help); exit(Exit.ok) }
            fail(Exit.usage, "usage", "context needs an action; see 'mdoc-respond context --help'")
        }
        let o = Options(Array(args.dropFirst()), flags: ["--json", "--any", "--require-reader-auth", "--no-require-reader-auth",
                                                                   "--require-trusted-reader", "--no-require-trusted-reader"], help: help)
        o.check(allowed: ["--context", "--issuer-signed", "--device-key", "--id", "--doctype", "--allow-authority"])
        let dir = URL(fileURLWithPath: o.require("--context"))
        if action == "init" {
            do {
                try FileManager.default.createDirectory(at: dir.appendingPathComponent("keys"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                guard try CredentialContext.load(from: dir) == nil else { fail(Exit.refused, "contextExists", "a context already exists in that directory") }
                try CredentialContext(entries: [], keyResolver: FileKeyResolver(directory: dir)).write(to: dir)
                print("initialized an empty context")
            } catch let e as AnnexCError { fail(Exit.io, e.code.rawValue, e.detail) } catch { fail(Exit.io, "io", "cannot create the context directory") }
            return
        }
        let current: CredentialContext
        do {
            guard let c = try CredentialContext.load(from: dir) else { fail(Exit.io, "contextUnavailable", "no context in that directory (run context init)") }
            current = c
        } catch { fail(Exit.io, error.code.rawValue, error.detail) }
        var entries = current.entries
        var trust = current.readerTrust
        func save(_ message: String) {
            do {
                try CredentialContext(entries: entries, readerTrust: trust, keyResolver: FileKeyResolver(directory: dir)).write(to: dir)
                print(message)
            } catch { fail(error.code == .contextUnavailable ? Exit.io : Exit.refused, error.code.rawValue, error.detail) }
        }
        func index(_ id: String?) -> Int {
            guard let id, let i = entries.firstIndex(where: { $0.id == id }) else { fail(Exit.refused, "unknownCredential", "no credential with that id") }
            return i
        }
        switch action {
        case "import":
            let issuerSigned = Input.read(o.require("--issuer-signed"))
            let keyBytes = Input.read(o.require("--device-key"))
            let id = o.value("--id") ?? "credential-\(entries.count + 1)"
            guard !entries.contains(where: { $0.id == id }), id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7a) || $0 == 0x2d || $0 == 0x5f }) else {
                fail(Exit.refused, "invalidId", "the id exists already or has characters outside [A-Za-z0-9-_]")
            }
            let keyPath = "keys/\(id).pem"
            guard let signer = try? SoftwareSigner(encodedPrivateKey: keyBytes), let pem = try? signer.pkcs8PEM() else {
                fail(Exit.refused, "keyUnavailable", "the device key is not a PKCS#8 P-256/P-384/P-521/Ed25519 key")
            }
            try? FileManager.default.createDirectory(at: dir.appendingPathComponent("keys"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let url = dir.appendingPathComponent(keyPath)
            guard FileManager.default.createFile(atPath: url.path, contents: Data(pem.utf8), attributes: [.posixPermissions: 0o600]) else {
                fail(Exit.io, "io", "cannot write the key file")
            }
            entries.append(.init(id: id, docTypes: o.values["--doctype"], issuerSigned: issuerSigned, deviceKeyReference: keyPath))
            do {
                _ = try CredentialContext(entries: entries, readerTrust: trust, keyResolver: FileKeyResolver(directory: dir))
            } catch {
                try? FileManager.default.removeItem(at: url)
                fail(Exit.refused, error.code.rawValue, error.detail)
            }
            save("imported \(id)")
        case "list":
            let regs = current.credentials
            if o.flags.contains("--json") {
                let items = regs.map { c in
                    "{\"id\":\(jsonString(c.id)),\"docTypes\":[\(c.docTypes.map(jsonString).joined(separator: ","))],\"cancelled\":\(c.isCancelled),"
                        + "\"validFrom\":\(jsonString(MdocDate.formatDateTime(c.validFrom))),\"validUntil\":\(jsonString(MdocDate.formatDateTime(c.validUntil))),"
                        + "\"elements\":\(c.elements.count),\"registration\":{\"credentialId\":\(jsonString(c.registration.credentialID)),"
                        + "\"docType\":\(jsonString(c.registration.docType)),\"invalidationDate\":\(jsonString(MdocDate.formatDateTime(c.registration.invalidationDate)))}}"
                }
                print("[" + items.joined(separator: ",") + "]")
            } else {
                for c in regs {
                    print("\(safe(c.id))\t\(c.docTypes.map(safe).joined(separator: ","))\t\(c.elements.count) elements\tvalid \(MdocDate.formatDateTime(c.validFrom)) … \(MdocDate.formatDateTime(c.validUntil))\(c.isCancelled ? "\tCANCELLED" : "")")
                }
                let auth: String
                switch trust.authorities { case .any: auth = "any"; case .only(let l): auth = l.isEmpty ? "any" : l.map { hex($0) }.joined(separator: ",") }
                print("reader trust: \(trust.trustAnchors.count) anchor(s); authorities: \(auth); trusted reader required: \(trust.requireTrustedReader); reader authentication required: \(trust.requireReaderAuthentication)")
            }
        case "remove":
            let i = index(o.positionals.first)
            let key = entries[i].deviceKeyReference
            entries.remove(at: i)
            save("removed")
            if key.hasPrefix("keys/") { try? FileManager.default.removeItem(at: dir.appendingPathComponent(key)) }
        case "cancel", "reinstate":
            let i = index(o.positionals.first)
            entries[i].isCancelled = action == "cancel"
            save(action == "cancel" ? "cancelled" : "reinstated")
        case "policy":
            if o.flags.contains("--any") {
                trust.authorities = .any
            } else if let list = o.values["--allow-authority"] {
                var skis = [[UInt8]]()
                for h in list {
                    guard let b = Input.hexBytes(h), !b.isEmpty else { fail(Exit.usage, "usage", "--allow-authority takes a hex key identifier") }
                    skis.append(b)
                }
                trust.authorities = .only(skis)
            }
            if o.flags.contains("--require-reader-auth") { trust.requireReaderAuthentication = true }
            if o.flags.contains("--no-require-reader-auth") { trust.requireReaderAuthentication = false }
            if o.flags.contains("--require-trusted-reader") { trust.requireTrustedReader = true }
            if o.flags.contains("--no-require-trusted-reader") { trust.requireTrustedReader = false }
            save("policy updated")
        case "trust":
            guard o.positionals.count == 2 else { fail(Exit.usage, "usage", "trust add|remove FILE") }
            let cert = Input.certificate(Input.read(o.positionals[1]))
            if o.positionals[0] == "add" {
                if !trust.trustAnchors.contains(where: { $0.der == cert.der }) { trust.trustAnchors.append(cert) }
                save("trust anchor added: \(safe(cert.subject))")
            } else if o.positionals[0] == "remove" {
                trust.trustAnchors.removeAll { $0.der == cert.der }
                save("trust anchor removed")
            } else {
                fail(Exit.usage, "usage", "trust add|remove FILE")
            }
        default:
            fail(Exit.usage, "usage", "unknown context action '\(action)'")
        }
    }
}
