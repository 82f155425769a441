// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "itsypad",
    products: [
        .executable(name: "itsypad", targets: ["itsypad"]),
        .library(name: "ItsypadKit", targets: ["ItsypadKit"]),
    ],
    targets: [
        .target(name: "ItsypadKit"),
        .executableTarget(name: "itsypad", dependencies: ["ItsypadKit"]),
        // Not a product: the AEAD throughput measurement behind Tests/Benchmarks/crypto-bench.sh.
        .executableTarget(name: "crypto-bench", dependencies: ["ItsypadKit"], path: "Tests/Benchmarks/CryptoBench"),
        .testTarget(name: "ItsypadKitTests", dependencies: ["ItsypadKit", "itsypad"]),
    ],
    swiftLanguageModes: [.v6]
)
