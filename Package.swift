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
        .testTarget(name: "ItsypadKitTests", dependencies: ["ItsypadKit", "itsypad"]),
    ],
    swiftLanguageModes: [.v6]
)
