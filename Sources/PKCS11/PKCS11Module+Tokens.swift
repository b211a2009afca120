internal import CPKCS11
import CryptoCore
#if canImport(Glibc)
    import Glibc
#endif

/// Key and token management (the CLI's and the tests' token set-up), and Cryptoki return values.
extension PKCS11Module {
    // MARK: Key and token management

    /// Generates an EC key pair (`CKM_EC_KEY_PAIR_GEN`) from the two templates; returns the public
    /// and private object handles.
    package func generateECKeyPair(_ session: UInt, publicTemplate: [Attribute], privateTemplate: [Attribute])
        throws(PKCS11Error) -> (publicKey: UInt, privateKey: UInt)
    {
        guard let generate = functions.pointee.C_GenerateKeyPair else {
            throw PKCS11Error(.notAModule, "the module cannot generate key pairs")
        }
        var mechanism = CK_MECHANISM(
            mechanism: CK_MECHANISM_TYPE(CKM_EC_KEY_PAIR_GEN), pParameter: nil, ulParameterLen: 0)
        var pub: CK_OBJECT_HANDLE = 0
        var priv: CK_OBJECT_HANDLE = 0
        let rv = withTemplate(publicTemplate) { pt, pn in
            withTemplate(privateTemplate) { kt, kn in
                call { _ in generate(CK_SESSION_HANDLE(session), &mechanism, pt, pn, kt, kn, &pub, &priv) }
            }
        }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_GenerateKeyPair failed") }
        return (UInt(pub), UInt(priv))
    }

    /// Creates an object from `template` (test set-ups import the published test keys this way).
    package func createObject(_ session: UInt, _ template: [Attribute]) throws(PKCS11Error) -> UInt {
        guard let create = functions.pointee.C_CreateObject else {
            throw PKCS11Error(.notAModule, "the module cannot create objects")
        }
        var handle: CK_OBJECT_HANDLE = 0
        let rv = withTemplate(template) { t, n in call { _ in create(CK_SESSION_HANDLE(session), t, n, &handle) } }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_CreateObject failed") }
        return UInt(handle)
    }

    /// Destroys an object.
    package func destroyObject(_ session: UInt, _ object: UInt) throws(PKCS11Error) {
        guard let destroy = functions.pointee.C_DestroyObject else {
            throw PKCS11Error(.notAModule, "the module cannot destroy objects")
        }
        let rv = call { _ in destroy(CK_SESSION_HANDLE(session), CK_OBJECT_HANDLE(object)) }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_DestroyObject failed") }
    }

    /// Initialises the token in `slot` with a security officer PIN and a label (`C_InitToken`), then
    /// sets the user PIN (`C_InitPIN` as the security officer). For test and demo set-ups.
    package func initialiseToken(slot: UInt, label: String, soPIN: [UInt8], userPIN: [UInt8]) throws(PKCS11Error) {
        guard let initToken = functions.pointee.C_InitToken, let initPIN = functions.pointee.C_InitPIN else {
            throw PKCS11Error(.notAModule, "the module cannot initialise tokens")
        }
        var labelField = [UInt8](repeating: 0x20, count: 32)
        for (i, b) in label.utf8.prefix(32).enumerated() { labelField[i] = b }
        var rv = soPIN.withUnsafeBufferPointer { so in
            labelField.withUnsafeMutableBufferPointer { l in
                call { _ in
                    initToken(
                        CK_SLOT_ID(slot), UnsafeMutablePointer(mutating: so.baseAddress), CK_ULONG(so.count),
                        l.baseAddress)
                }
            }
        }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_InitToken failed") }
        // The token may move to another slot id once initialised: find it by label.
        guard let moved = try slots().first(where: { $0.token?.label == label && $0.token?.initialised == true })
        else { throw PKCS11Error(.tokenAbsent, "the initialised token is not listed") }
        let session = try openSession(slot: moved.id, readWrite: true)
        defer { closeSession(session) }
        try soPIN.withPKCS11Bytes { (p) throws(PKCS11Error) in try login(session, securityOfficer: true, pin: p) }
        rv = userPIN.withUnsafeBufferPointer { u in
            call { _ in
                initPIN(CK_SESSION_HANDLE(session), UnsafeMutablePointer(mutating: u.baseAddress), CK_ULONG(u.count))
            }
        }
        logout(session)
        guard rv == CKR_OK else { throw Self.classify(rv, "C_InitPIN failed") }
    }

    // MARK: Return values

    /// The error for a failed call: the token gone, a session or object that is no longer valid, a
    /// login needed, or the token failing.
    static func classify(_ rv: CK_RV, _ step: String) -> PKCS11Error {
        switch rv {
        case CKR_DEVICE_REMOVED, CKR_TOKEN_NOT_PRESENT, CKR_TOKEN_NOT_RECOGNIZED, CKR_SLOT_ID_INVALID:
            return PKCS11Error(.tokenAbsent, step, returnValue: rv)
        case CKR_PIN_LOCKED, CKR_PIN_EXPIRED:
            return PKCS11Error(.pinLocked, step, returnValue: rv)
        case CKR_CRYPTOKI_NOT_INITIALIZED:
            // Not transient: the module holds no state for this process (a forked child whose module
            // refuses the parent's initialisation and was not initialised again).
            return PKCS11Error(
                .moduleFailed, step + ": the module is not initialised in this process", returnValue: rv)
        default:
            return PKCS11Error(.tokenFailed, step, returnValue: rv)
        }
    }

    /// Whether a failed call's return value means the session or object handle went stale (a
    /// fresh session, login and key lookup may succeed).
    package static func isStale(_ error: PKCS11Error) -> Bool {
        guard let rv = error.returnValue else { return false }
        return [
            CKR_SESSION_HANDLE_INVALID, CKR_SESSION_CLOSED, CKR_USER_NOT_LOGGED_IN, CKR_OBJECT_HANDLE_INVALID,
            CKR_KEY_HANDLE_INVALID, CKR_OPERATION_ACTIVE,
        ].contains(CK_RV(rv))
    }

    /// The `CKR_*` name of a return value (or its hex).
    package static func returnValueName(_ rv: UInt) -> String {
        let names: [CK_RV: String] = [
            CKR_OK: "CKR_OK", CKR_CANCEL: "CKR_CANCEL", CKR_HOST_MEMORY: "CKR_HOST_MEMORY",
            CKR_SLOT_ID_INVALID: "CKR_SLOT_ID_INVALID", CKR_GENERAL_ERROR: "CKR_GENERAL_ERROR",
            CKR_FUNCTION_FAILED: "CKR_FUNCTION_FAILED", CKR_ARGUMENTS_BAD: "CKR_ARGUMENTS_BAD",
            CKR_CANT_LOCK: "CKR_CANT_LOCK", CKR_ATTRIBUTE_SENSITIVE: "CKR_ATTRIBUTE_SENSITIVE",
            CKR_ATTRIBUTE_TYPE_INVALID: "CKR_ATTRIBUTE_TYPE_INVALID",
            CKR_ATTRIBUTE_VALUE_INVALID: "CKR_ATTRIBUTE_VALUE_INVALID", CKR_DATA_INVALID: "CKR_DATA_INVALID",
            CKR_DATA_LEN_RANGE: "CKR_DATA_LEN_RANGE", CKR_DEVICE_ERROR: "CKR_DEVICE_ERROR",
            CKR_DEVICE_MEMORY: "CKR_DEVICE_MEMORY", CKR_DEVICE_REMOVED: "CKR_DEVICE_REMOVED",
            CKR_FUNCTION_CANCELED: "CKR_FUNCTION_CANCELED", CKR_FUNCTION_NOT_SUPPORTED: "CKR_FUNCTION_NOT_SUPPORTED",
            CKR_KEY_HANDLE_INVALID: "CKR_KEY_HANDLE_INVALID", CKR_KEY_TYPE_INCONSISTENT: "CKR_KEY_TYPE_INCONSISTENT",
            CKR_KEY_FUNCTION_NOT_PERMITTED: "CKR_KEY_FUNCTION_NOT_PERMITTED",
            CKR_MECHANISM_INVALID: "CKR_MECHANISM_INVALID", CKR_MECHANISM_PARAM_INVALID: "CKR_MECHANISM_PARAM_INVALID",
            CKR_OBJECT_HANDLE_INVALID: "CKR_OBJECT_HANDLE_INVALID", CKR_OPERATION_ACTIVE: "CKR_OPERATION_ACTIVE",
            CKR_OPERATION_NOT_INITIALIZED: "CKR_OPERATION_NOT_INITIALIZED", CKR_PIN_INCORRECT: "CKR_PIN_INCORRECT",
            CKR_PIN_INVALID: "CKR_PIN_INVALID", CKR_PIN_LEN_RANGE: "CKR_PIN_LEN_RANGE",
            CKR_PIN_EXPIRED: "CKR_PIN_EXPIRED", CKR_PIN_LOCKED: "CKR_PIN_LOCKED",
            CKR_SESSION_CLOSED: "CKR_SESSION_CLOSED", CKR_SESSION_COUNT: "CKR_SESSION_COUNT",
            CKR_SESSION_HANDLE_INVALID: "CKR_SESSION_HANDLE_INVALID",
            CKR_SESSION_READ_ONLY: "CKR_SESSION_READ_ONLY", CKR_TEMPLATE_INCOMPLETE: "CKR_TEMPLATE_INCOMPLETE",
            CKR_TEMPLATE_INCONSISTENT: "CKR_TEMPLATE_INCONSISTENT", CKR_TOKEN_NOT_PRESENT: "CKR_TOKEN_NOT_PRESENT",
            CKR_TOKEN_NOT_RECOGNIZED: "CKR_TOKEN_NOT_RECOGNIZED",
            CKR_TOKEN_WRITE_PROTECTED: "CKR_TOKEN_WRITE_PROTECTED",
            CKR_USER_ALREADY_LOGGED_IN: "CKR_USER_ALREADY_LOGGED_IN",
            CKR_USER_NOT_LOGGED_IN: "CKR_USER_NOT_LOGGED_IN",
            CKR_USER_PIN_NOT_INITIALIZED: "CKR_USER_PIN_NOT_INITIALIZED",
            CKR_USER_TYPE_INVALID: "CKR_USER_TYPE_INVALID", CKR_BUFFER_TOO_SMALL: "CKR_BUFFER_TOO_SMALL",
            CKR_CRYPTOKI_NOT_INITIALIZED: "CKR_CRYPTOKI_NOT_INITIALIZED",
            CKR_CRYPTOKI_ALREADY_INITIALIZED: "CKR_CRYPTOKI_ALREADY_INITIALIZED",
            CKR_CURVE_NOT_SUPPORTED: "CKR_CURVE_NOT_SUPPORTED", CKR_DOMAIN_PARAMS_INVALID: "CKR_DOMAIN_PARAMS_INVALID",
        ]
        return names[CK_RV(rv)] ?? "CKR 0x" + String(rv, radix: 16)
    }
}
