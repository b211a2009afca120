// swift-tools-version:6.0
// libFuzzer targets for mdoc-respond, kept out of the main package so its normal builds never see a
// libFuzzer entry point. Build and run with scripts/fuzz.sh.
import PackageDescription

let package = Package(
    name: "mdoc-respond-fuzz",
    dependencies: [.package(name: "mdoc-respond", path: "..")],
    targets: [
        // What the request-path targets share: the built-in context and the accept/respond agreement check.
        .target(
            name: "FuzzSupport",
            dependencies: [
                .product(name: "DigitalCredentials", package: "mdoc-respond"),
                .product(name: "MdocCBOR", package: "mdoc-respond"), .product(name: "HPKE", package: "mdoc-respond"),
            ]),
        .executableTarget(
            name: "FuzzCBOR", dependencies: [.product(name: "MdocCBOR", package: "mdoc-respond")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzRequest",
            dependencies: [
                "FuzzSupport", .product(name: "DigitalCredentials", package: "mdoc-respond"),
                .product(name: "MdocCBOR", package: "mdoc-respond"), .product(name: "HPKE", package: "mdoc-respond"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzHPKEOpen", dependencies: [.product(name: "HPKE", package: "mdoc-respond")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzOpenID4VP",
            dependencies: [
                "FuzzSupport", .product(name: "DigitalCredentials", package: "mdoc-respond"),
                .product(name: "MdocCBOR", package: "mdoc-respond"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzPKCS11URI", dependencies: [.product(name: "PKCS11", package: "mdoc-respond")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzABI", dependencies: [.product(name: "mdocrespond-static", package: "mdoc-respond")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzZkRequest",
            dependencies: [
                "FuzzSupport", .product(name: "DigitalCredentials", package: "mdoc-respond"),
                .product(name: "MdocCBOR", package: "mdoc-respond"), .product(name: "HPKE", package: "mdoc-respond"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzContext", dependencies: [.product(name: "DigitalCredentials", package: "mdoc-respond")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ],
    swiftLanguageModes: [.v6]
)
