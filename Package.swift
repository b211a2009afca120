// swift-tools-version:6.0
// mdoc-respond: the wallet side of presenting an mdoc through the W3C Digital Credentials API:
// ISO/IEC 18013-7 Annex C (org-iso-mdoc) and OpenID4VP (openid4vp-v1-*) as front ends of one engine.
//
// Import graph (each module imports only those below it; no back edges):
//   CryptoCore                 the one OpenSSL wrapper
//   MdocCBOR, HPKE, WebEncoding  -> CryptoCore        JOSE -> WebEncoding        PKCS11 -> MdocCBOR
//   Presentment                -> MdocCBOR            the core: the engine, the front-end contract, one
//                                                     configuration, the context, trust, the planner
//   DCAPIFraming               -> Presentment, WebEncoding            the DC API envelope, read once
//   Longfellow                 -> Presentment, libzstd                zero-knowledge proofs (the ISRG
//                                                     library dlopened), the pinned circuits
//   AnnexC                     -> DCAPIFraming, HPKE                  front end (org-iso-mdoc)
//   OpenID4VP                  -> DCAPIFraming, JOSE                  front end (openid4vp-v1-*)
//   DigitalCredentials         -> AnnexC, OpenID4VP, PKCS11, Longfellow   the facade; token key resolvers;
//                                                     the installed prover by default
//   MdocRespondC (C ABI), mdoc-respond (CLI)  -> DigitalCredentials
//   AnnexCReader -> AnnexC, Longfellow; OpenID4VPReader -> OpenID4VP, AnnexCReader   the verifier side
//                                                     (CLI, bench, vectors, tests; not products)
import PackageDescription

let package = Package(
    name: "mdoc-respond",
    products: [
        // What a wallet backend links: `import DigitalCredentials` (the engine, the context, the trust
        // policy, requests, approvals and errors; it re-exports the core and both front ends).
        .library(name: "DigitalCredentials", targets: ["DigitalCredentials"]),
        // The lower layers, each usable on its own.
        .library(name: "MdocCBOR", targets: ["MdocCBOR"]),
        .library(name: "HPKE", targets: ["HPKE"]),
        .library(name: "PKCS11", targets: ["PKCS11"]),
        .executable(name: "mdoc-respond", targets: ["mdoc-respond"]),
        // The C ABI (include/mdoc_respond.h): libmdocrespond.so, and libmdocrespond-static.a.
        .library(name: "mdocrespond", type: .dynamic, targets: ["MdocRespondC"]),
        .library(name: "mdocrespond-static", type: .static, targets: ["MdocRespondC"]),
        // A fault-injecting PKCS#11 module over SoftHSM2, for the PKCS#11 failure tests only.
        .library(name: "mdoc-p11-fault", type: .dynamic, targets: ["PKCS11FaultModule"]),
        .executable(name: "mdoc-bench", targets: ["mdoc-bench"]),
        .executable(name: "mdoc-vectors", targets: ["mdoc-vectors"]),
    ],
    targets: [
        // System libraries. Shim headers carry the macros, compound constants and static-lifetime
        // strings that Swift cannot import directly.
        .systemLibrary(name: "CLibCBOR", pkgConfig: "libcbor", providers: [.apt(["libcbor-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // The PKCS#11 (Cryptoki 2.40) header from libp11-kit-dev; nothing is linked (modules are dlopened).
        .systemLibrary(name: "CPKCS11", providers: [.apt(["libp11-kit-dev"])]),

        // The ISRG Longfellow prover's uniffi C ABI (types only; the library is dlopened) and Debian's
        // libzstd (its circuits are zstd-compressed).
        .systemLibrary(name: "CLongfellowABI"),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),

        // The one wrapper around OpenSSL: every OpenSSL call in the project lives here.
        .target(name: "CryptoCore", dependencies: ["COpenSSL"]),

        .target(name: "MdocCBOR", dependencies: ["CryptoCore"]),
        // libcbor as an independent peer of MdocCBOR's head decoder (tests) and the benchmark's
        // baseline; no product links it.
        .target(name: "LibCBORPeer", dependencies: ["CLibCBOR"]),
        .target(name: "HPKE", dependencies: ["CryptoCore"]),
        // Device keys in a PKCS#11 token (an HSM, SoftHSM2 in tests): RFC 7512 URIs, the module loaded
        // once, a pool of logged-in sessions, a COSESigner over CKM_ECDSA. Every Cryptoki call lives here.
        .target(name: "PKCS11", dependencies: ["CPKCS11", "MdocCBOR", "CryptoCore"]),
        // WebEncoding's x86-64 vector steps (SSE/AVX2/AVX-512, chosen at run time; a header-only module):
        // base64url coding and the JSON reader's scans of plain strings. Only WebEncoding imports it.
        .systemLibrary(name: "CWebEncodingSIMD"),
        // Strict bounded JSON (parser and deterministic writer) and base64url: the web encodings both
        // Digital Credentials API front ends and JOSE read and write.
        .target(name: "WebEncoding", dependencies: ["CryptoCore", "CWebEncodingSIMD"]),
        // JOSE over CryptoCore: EC JWKs and RFC 7638 thumbprints, JWS (ES256/384/512) verify and sign,
        // JWE ECDH-ES with A128GCM / A256GCM and the Concat KDF.
        .target(name: "JOSE", dependencies: ["CryptoCore", "WebEncoding"]),
        // The protocol-neutral presentment core: credential context and its store, reader trust and
        // X.509 evaluation, selection and the one planner, the consent model, the DeviceResponse and
        // device signature over a given SessionTranscript. No framing, HPKE or base64url.
        .target(name: "Presentment", dependencies: ["MdocCBOR", "CryptoCore"]),
        // Zero-knowledge proofs (longfellow-libzk-v1) through the ISRG library, loaded at run time: the
        // engine's ZeroKnowledgeProver, the pinned circuit table, and the verifier for the reader side.
        .target(
            name: "Longfellow", dependencies: ["CLongfellowABI", "CZstd", "Presentment", "MdocCBOR", "CryptoCore"]),
        // The Digital Credentials API framings (the one envelope reader) that every front end's entry
        // arrives in, and their refusal rules.
        .target(name: "DCAPIFraming", dependencies: ["Presentment", "WebEncoding"]),
        // The org-iso-mdoc front end: EncryptionInfo, the dcapi SessionTranscript, COSE reader
        // authentication, HPKE sealing.
        .target(
            name: "AnnexC",
            dependencies: ["DCAPIFraming", "Presentment", "MdocCBOR", "HPKE", "WebEncoding", "CryptoCore"]),
        // The OpenID4VP (over the Digital Credentials API) front end for mso_mdoc: request objects,
        // verifier authentication, DCQL, the OpenID4VPDCAPIHandover transcript, JWE responses.
        .target(
            name: "OpenID4VP",
            dependencies: ["DCAPIFraming", "Presentment", "MdocCBOR", "JOSE", "WebEncoding", "CryptoCore"]),
        // The verifier's side, for tests, the CLI's reader commands and the demo. Wallet backends that
        // only answer requests do not link it.
        .target(
            name: "AnnexCReader",
            dependencies: ["AnnexC", "DCAPIFraming", "Presentment", "MdocCBOR", "HPKE", "WebEncoding", "Longfellow"]),
        // One entry point for both protocols (the CLI's): picks the protocol from the framing.
        .target(
            name: "DigitalCredentials",
            dependencies: [
                "AnnexC", "OpenID4VP", "DCAPIFraming", "Presentment", "MdocCBOR", "HPKE", "PKCS11", "WebEncoding",
                "Longfellow", "CryptoCore",
            ]),
        // The verifier's side of OpenID4VP, beside AnnexCReader (whose document verification it shares).
        .target(
            name: "OpenID4VPReader",
            dependencies: [
                "OpenID4VP", "AnnexCReader", "DCAPIFraming", "JOSE", "Presentment", "MdocCBOR", "WebEncoding",
                "CryptoCore",
            ]),
        // The C ABI's header as a module, so its status numbers and error struct have one definition.
        .systemLibrary(name: "CMdocRespondABI"),
        // The C ABI over DigitalCredentialsEngine: @_cdecl entry points, a handle registry, JSON settings.
        .target(
            name: "MdocRespondC",
            dependencies: [
                "CMdocRespondABI", "DigitalCredentials", "Presentment", "MdocCBOR", "WebEncoding", "CryptoCore",
                "PKCS11",
            ]),
        .executableTarget(
            name: "mdoc-respond",
            dependencies: [
                "DigitalCredentials", "AnnexC", "AnnexCReader", "OpenID4VP", "OpenID4VPReader", "Presentment",
                "MdocCBOR", "HPKE", "WebEncoding", "PKCS11", "Longfellow",
            ]),
        .executableTarget(
            name: "mdoc-bench",
            dependencies: [
                "MdocCBOR", "HPKE", "Presentment", "AnnexC", "AnnexCReader", "OpenID4VP", "OpenID4VPReader",
                "CryptoCore", "PKCS11", "DigitalCredentials", "Longfellow", "MdocRespondC", "CMdocRespondABI",
                "LibCBORPeer",
            ]),
        // Regenerates TestVectors/ (seeded keys, salts and nonces; ECDSA signatures vary per run).
        .executableTarget(
            name: "mdoc-vectors",
            dependencies: [
                "MdocCBOR", "HPKE", "Presentment", "AnnexC", "AnnexCReader", "OpenID4VP", "OpenID4VPReader",
                "DigitalCredentials",
            ]),

        // Shared test helpers (vector locations, hex).
        .target(name: "TestSupport", path: "Tests/TestSupport"),  // links Swift Testing (skip traits)
        // A generated test PKI, credentials and engines, for the core, front-end and conformance suites.
        .target(
            name: "TestWorld",
            dependencies: [
                "AnnexC", "AnnexCReader", "OpenID4VP", "OpenID4VPReader", "DCAPIFraming", "DigitalCredentials",
                "Presentment", "MdocCBOR", "HPKE", "JOSE", "WebEncoding", "CryptoCore", "PKCS11", "TestSupport",
            ],
            path: "Tests/TestWorld"),
        .testTarget(name: "CryptoCoreTests", dependencies: ["CryptoCore", "TestSupport"]),
        .testTarget(name: "MdocCBORTests", dependencies: ["MdocCBOR", "CryptoCore", "TestSupport", "LibCBORPeer"]),
        .target(name: "PKCS11FaultModule", path: "Tests/PKCS11FaultModule", linkerSettings: [.linkedLibrary("dl")]),
        .testTarget(
            name: "PKCS11Tests", dependencies: ["PKCS11", "MdocCBOR", "CryptoCore", "TestSupport", "TestWorld"]),
        .testTarget(name: "HPKETests", dependencies: ["HPKE", "CryptoCore", "TestSupport"]),
        .testTarget(
            name: "MdocRespondCTests",
            dependencies: [
                "MdocRespondC", "CMdocRespondABI", "DigitalCredentials", "Presentment", "MdocCBOR", "TestSupport",
            ]),
        .testTarget(name: "WebEncodingTests", dependencies: ["WebEncoding", "TestSupport"]),
        .testTarget(
            name: "DCAPIFramingTests", dependencies: ["DCAPIFraming", "Presentment", "WebEncoding", "TestWorld"]),
        .testTarget(
            name: "DigitalCredentialsTests",
            dependencies: ["DigitalCredentials", "AnnexC", "OpenID4VP", "DCAPIFraming", "Presentment"]),
        .testTarget(name: "LongfellowTests", dependencies: ["Longfellow", "Presentment"]),
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "WebEncoding", "CryptoCore", "TestSupport"]),
        .testTarget(
            name: "PresentmentTests",
            dependencies: [
                "Presentment", "AnnexC", "AnnexCReader", "DigitalCredentials", "MdocCBOR", "HPKE", "CryptoCore",
                "TestSupport", "TestWorld",
            ]),
        .testTarget(
            name: "AnnexCTests",
            dependencies: [
                "AnnexC", "AnnexCReader", "Presentment", "MdocCBOR", "HPKE", "TestSupport", "TestWorld",
                "DigitalCredentials", "DCAPIFraming", "Longfellow", "OpenID4VP", "OpenID4VPReader", "WebEncoding",
            ]),
        .testTarget(
            name: "OpenID4VPTests",
            dependencies: [
                "OpenID4VP", "OpenID4VPReader", "AnnexC", "AnnexCReader", "DigitalCredentials", "JOSE", "Presentment",
                "MdocCBOR", "WebEncoding", "CryptoCore",
                "TestSupport", "TestWorld",
            ]),
        .testTarget(
            name: "ConformanceTests",
            dependencies: [
                "AnnexC", "AnnexCReader", "OpenID4VP", "OpenID4VPReader", "DigitalCredentials", "Longfellow",
                "Presentment",
                "MdocCBOR", "HPKE", "TestSupport", "TestWorld",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
