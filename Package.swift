// swift-tools-version:6.0
// mdoc-respond: the wallet side of ISO/IEC 18013-7 Annex C (org-iso-mdoc over the W3C Digital Credentials API).
import PackageDescription

let package = Package(
    name: "mdoc-respond",
    products: [
        .library(name: "MdocCBOR", targets: ["MdocCBOR"]),
        .library(name: "HPKE", targets: ["HPKE"]),
        .library(name: "AnnexC", targets: ["AnnexC"]),
        .executable(name: "mdoc-respond", targets: ["mdoc-respond"]),
        .executable(name: "mdoc-bench", targets: ["mdoc-bench"]),
        .executable(name: "mdoc-vectors", targets: ["mdoc-vectors"]),
    ],
    targets: [
        // System libraries. Shim headers carry the macros, compound constants and static-lifetime
        // strings that Swift cannot import directly.
        .systemLibrary(name: "CLibCBOR", pkgConfig: "libcbor", providers: [.apt(["libcbor-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),

        // The one wrapper around OpenSSL: every OpenSSL call in the project lives here.
        .target(name: "CryptoCore", dependencies: ["COpenSSL"]),

        .target(name: "MdocCBOR", dependencies: ["CLibCBOR", "CryptoCore"]),
        .target(name: "HPKE", dependencies: ["CryptoCore"]),
        .target(name: "AnnexC", dependencies: ["MdocCBOR", "HPKE", "CryptoCore"]),
        .executableTarget(name: "mdoc-respond", dependencies: ["AnnexC", "MdocCBOR", "HPKE"]),
        .executableTarget(name: "mdoc-bench", dependencies: ["MdocCBOR", "HPKE", "AnnexC", "CryptoCore"]),
        // Regenerates TestVectors/ (seeded keys, salts and nonces; ECDSA signatures vary per run).
        .executableTarget(name: "mdoc-vectors", dependencies: ["MdocCBOR", "HPKE", "AnnexC"]),

        // Shared test helpers (vector locations, hex).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "MdocCBORTests", dependencies: ["MdocCBOR", "CryptoCore", "TestSupport"]),
        .testTarget(name: "HPKETests", dependencies: ["HPKE", "CryptoCore", "TestSupport"]),
        .testTarget(name: "AnnexCTests", dependencies: ["AnnexC", "MdocCBOR", "HPKE", "TestSupport"]),
        .testTarget(name: "ConformanceTests", dependencies: ["AnnexC", "MdocCBOR", "HPKE", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
