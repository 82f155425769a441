import Testing

@testable import ItsypadCLI
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Output written to a descriptor arrives whole and in order, however it was handed over: pieces
/// small and large (a listing's blocks, a text of many MiB), lines, and appends in place.
@Suite struct OutputBufferTests {
    @Test func piecesOfEverySizeArriveInOrder() throws {
        let scratch = TemporaryDirectory()
        let path = scratch.file("out")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        let out = OutputBuffer(fd: fd)
        var expected: [UInt8] = []
        for (index, size) in [1, 100, 1 << 15, 7, 1 << 16, 3, 1 << 18, (1 << 18) + 1, 5, 3 << 20, 11].enumerated() {
            let piece = (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ index) }
            if index % 3 == 2 {
                out.append { $0 += piece }
            } else {
                out.write(piece)
            }
            expected += piece
            out.line("line \(index)")
            expected += Array("line \(index)\n".utf8)
        }
        out.flush()
        #expect(try FileSystem.read(path) == expected)
    }
}
