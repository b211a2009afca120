import CryptoCore
import MdocCBOR

/// Creating device keys in a token: a holder's key born in the token, its public half handed to the
/// issuer. The private key is created sensitive and not extractable.
public enum PKCS11KeyGeneration {
    /// Generates an EC key pair in the token `uri` names, labelled `uri.object` and with id `uri.id`
    /// (16 random bytes when the URI has none). Refuses when a private key with that label or id
    /// exists already in the token.
    /// - Returns: the URI that names the new key (with `id`, the module path and PIN source of `uri`)
    ///   and its public key.
    public static func generate(_ uri: PKCS11URI, curve: COSEKey.Curve = .p256) throws(PKCS11Error) -> (
        uri: PKCS11URI, publicKey: COSEKey
    ) {
        guard let params = PKCS11Signer.ecParams(curve) else {
            throw PKCS11Error(.keyUnsuitable, "device keys in a token are P-256, P-384 or P-521")
        }
        guard let label = uri.object else { throw PKCS11Error(.invalidURI, "name the new key with object=") }
        var named = uri
        if named.id == nil {
            do { named.id = try SecureBytes.random(count: 16) } catch {
                throw PKCS11Error(.tokenFailed, "no random bytes for the key id")
            }
        }
        let id = named.id!
        let sessions = try TokenSessions.forURI(uri)
        let module = sessions.module
        try sessions.withReadWriteSession(pin: uri.pinSource) { (s) throws(PKCS11Error) in
            typealias A = PKCS11Module.AttributeType
            for attribute in [PKCS11Module.Attribute.bytes(A.label, Array(label.utf8)), .bytes(A.id, id)] {
                guard
                    try module.findObjects(
                        s, [.ulong(A.objectClass, PKCS11Module.ObjectClass.privateKey), attribute], limit: 1
                    ).isEmpty
                else { throw PKCS11Error(.keyAmbiguous, "a private key with that label or id exists in the token") }
            }
            let common: [PKCS11Module.Attribute] = [
                .ulong(A.keyType, PKCS11Module.ObjectClass.ecKeyType), .bool(A.token, true),
                .bytes(A.label, Array(label.utf8)), .bytes(A.id, id),
            ]
            _ = try module.generateECKeyPair(
                s,
                publicTemplate: [.ulong(A.objectClass, PKCS11Module.ObjectClass.publicKey)] + common + [
                    .bool(A.verify, true), .bool(A.isPrivate, false), .bytes(A.ecParams, params),
                ],
                privateTemplate: [.ulong(A.objectClass, PKCS11Module.ObjectClass.privateKey)] + common + [
                    .bool(A.sign, true), .bool(A.isPrivate, true), .bool(A.sensitive, true),
                    .bool(A.extractable, false),
                ])
        }
        let signer = try PKCS11Signer(uri: named)
        return (named, signer.publicKey)
    }

    /// Imports a private key given as its scalar, with its public key object (test set-ups only:
    /// the published test keys go into a SoftHSM2 token so the token answers what the files answer).
    package static func importTestKey(
        _ uri: PKCS11URI, curve: COSEKey.Curve, scalar: [UInt8], publicKey: COSEKey
    ) throws(PKCS11Error) {
        guard let params = PKCS11Signer.ecParams(curve), let label = uri.object, let id = uri.id,
            let y = publicKey.y
        else { throw PKCS11Error(.invalidURI, "an imported key needs object=, id= and an EC key") }
        let point = [0x04] + publicKey.x + y
        let encodedPoint = [0x04] + (point.count < 128 ? [UInt8(point.count)] : [0x81, UInt8(point.count)]) + point
        let sessions = try TokenSessions.forURI(uri)
        let module = sessions.module
        try sessions.withReadWriteSession(pin: uri.pinSource) { (s) throws(PKCS11Error) in
            typealias A = PKCS11Module.AttributeType
            let common: [PKCS11Module.Attribute] = [
                .ulong(A.keyType, PKCS11Module.ObjectClass.ecKeyType), .bool(A.token, true),
                .bytes(A.label, Array(label.utf8)), .bytes(A.id, id), .bytes(A.ecParams, params),
            ]
            _ = try module.createObject(
                s,
                [.ulong(A.objectClass, PKCS11Module.ObjectClass.privateKey)] + common + [
                    .bool(A.sign, true), .bool(A.isPrivate, true), .bool(A.sensitive, true),
                    .bool(A.extractable, false), .bytes(A.value, scalar),
                ])
            _ = try module.createObject(
                s,
                [.ulong(A.objectClass, PKCS11Module.ObjectClass.publicKey)] + common + [
                    .bool(A.verify, true), .bool(A.isPrivate, false), .bytes(A.ecPoint, encodedPoint),
                ])
        }
    }

    /// Creates one object from raw attributes (test set-ups: keys of the wrong type, a public key that
    /// does not match, …). `attributes` pairs `CKA_*` values with their encodings.
    package static func createTestObject(_ uri: PKCS11URI, _ attributes: [PKCS11Module.Attribute]) throws(PKCS11Error) {
        let sessions = try TokenSessions.forURI(uri)
        try sessions.withReadWriteSession(pin: uri.pinSource) { (s) throws(PKCS11Error) in
            _ = try sessions.module.createObject(s, attributes)
        }
    }

    /// Initialises the first token-less (free) slot of a module with `label` and the two PINs (test
    /// and demo set-ups: a SoftHSM2 token in a temporary directory).
    package static func initialiseFreeToken(modulePath: String, label: String, soPIN: [UInt8], userPIN: [UInt8])
        throws(PKCS11Error)
    {
        let module = try PKCS11Module.load(path: modulePath)
        guard let free = try module.slots().first(where: { $0.token.map { !$0.initialised } ?? false }) else {
            throw PKCS11Error(.tokenAbsent, "the module has no uninitialised token")
        }
        try module.initialiseToken(slot: free.id, label: label, soPIN: soPIN, userPIN: userPIN)
    }
}

extension TokenSessions {
    /// Runs `body` on a read-write session of its own, logged in (key creation). Not pooled.
    func withReadWriteSession<R>(pin: PINSource?, _ body: (UInt) throws(PKCS11Error) -> R) throws(PKCS11Error) -> R {
        let session = try module.openSession(slot: slot, readWrite: true)
        defer { module.closeSession(session) }
        try logIn(session, pin: pin)
        return try body(session)
    }
}
