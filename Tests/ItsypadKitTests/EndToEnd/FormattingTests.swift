import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The sources follow the committed .swift-format configuration: `contrib/format` rewrites them,
/// `contrib/format --check` (run here) names every file it would change.
@Suite struct FormattingTests {
    /// The toolchain's swift-format: on PATH, or where the Swift toolchain is usually installed.
    static let swiftFormat: String? = {
        let candidates =
            (getenv("PATH").map { String(cString: $0) } ?? "").split(separator: ":").map { $0 + "/swift-format" }
            + ["/opt/swift/usr/bin/swift-format", "/usr/bin/swift-format"]
        return candidates.first { access($0, X_OK) == 0 }
    }()

    /// The swift-format the tree was formatted with: another version may lay the same code out
    /// differently, so the check runs only with this one.
    static let formattedWith = "6.3.1"

    static let swiftFormatVersion: String? = swiftFormat.flatMap { tool in
        (try? Process.run(tool, ["--version"], timeout: 60))?.stdout.split(whereSeparator: \.isWhitespace).first.map(String.init)
    }

    @Test(
        .enabled(if: swiftFormat != nil, "swift-format is not installed with this toolchain"),
        .enabled(if: swiftFormatVersion == formattedWith, "the sources were formatted with swift-format \(formattedWith)"))
    func sourcesAreFormatted() throws {
        let root = LayeringTests.root
        let result = try Process.run(
            "/bin/bash", [root + "/contrib/format", "--check", root + "/Sources", root + "/Tests", root + "/Package.swift"],
            environment: ["PATH": "/usr/bin:/bin", "SWIFT_FORMAT": try #require(Self.swiftFormat)], timeout: 600)
        #expect(result.status == 0, "run contrib/format to format these files:\n\(result.stdout)\(result.stderr)")
    }
}
