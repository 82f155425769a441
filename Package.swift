// swift-tools-version:6.0
import PackageDescription

// One target per layer, each allowed to import only the layers listed before it:
// Support, Model, Backend, Store, Sync, Desktop, CLI. A back-reference fails the build.
let package = Package(
    name: "itsypad",
    products: [
        .executable(name: "itsypad", targets: ["itsypad"])
    ],
    targets: [
        .target(name: "ItsypadSupport", path: "Sources/ItsypadKit/Support"),
        .target(name: "ItsypadModel", dependencies: ["ItsypadSupport"], path: "Sources/ItsypadKit/Model"),
        .target(name: "ItsypadBackend", dependencies: ["ItsypadSupport", "ItsypadModel"], path: "Sources/ItsypadKit/Backend"),
        .target(
            name: "ItsypadStore", dependencies: ["ItsypadSupport", "ItsypadModel", "ItsypadBackend"], path: "Sources/ItsypadKit/Store"),
        .target(
            name: "ItsypadSync", dependencies: ["ItsypadSupport", "ItsypadModel", "ItsypadBackend", "ItsypadStore"],
            path: "Sources/ItsypadKit/Sync"),
        // Clipboard sources (Wayland, X11, a terminal by OSC 52) behind one protocol.
        .target(
            name: "ItsypadDesktop", dependencies: ["ItsypadSupport", "ItsypadModel", "ItsypadBackend", "ItsypadStore", "ItsypadSync"],
            path: "Sources/ItsypadKit/Desktop"),
        .target(
            name: "ItsypadCLI",
            dependencies: ["ItsypadSupport", "ItsypadModel", "ItsypadBackend", "ItsypadStore", "ItsypadSync", "ItsypadDesktop"],
            path: "Sources/ItsypadKit/CLI",
            // itsypad-backend(5), written by hand: compiled in as bytes (no bundle, no Foundation) for `itsypad install`.
            resources: [.embedInCode("itsypad-backend.5")]),
        .executableTarget(
            name: "itsypad", dependencies: ["ItsypadCLI"],
            // Release: linked whole, so that no dynamic loader runs at start-up, where it would be most of the work
            // of a short command. It calls nothing in glibc that loads a library (no NSS, iconv or dlopen of its own).
            linkerSettings: [.unsafeFlags(["-static-executable"], .when(platforms: [.linux], configuration: .release))]),
        // Not a product: the AEAD throughput measurement behind Tests/Benchmarks/crypto-bench.sh.
        .executableTarget(name: "crypto-bench", dependencies: ["ItsypadSupport", "ItsypadBackend"], path: "Tests/Benchmarks/CryptoBench"),
        .testTarget(
            name: "ItsypadKitTests",
            dependencies: [
                "ItsypadSupport", "ItsypadModel", "ItsypadBackend", "ItsypadStore", "ItsypadSync", "ItsypadDesktop", "ItsypadCLI",
                "itsypad",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
