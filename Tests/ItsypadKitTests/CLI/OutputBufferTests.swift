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

    /// `OutputBlock`, the listing's gathering of a JSON element's pieces, hands over what writing
    /// each piece to the buffer itself would: pieces that cross a block's end, a piece larger than a
    /// block, numbers and base64 written in place.
    @Test func aBlockWritesWhatTheBufferWritesPieceByPiece() {
        var generator = SeededGenerator(seed: 40)
        let gathered = OutputBuffer(), direct = OutputBuffer()
        var block = OutputBlock(gathered)
        for round in 0..<3000 {
            let size = round % 500 == 7 ? (1 << 18) + Int(generator.next() % 100) : Int(generator.next() % 3000)
            let piece = (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ round) }
            switch round % 3 {
            case 0:
                piece.withUnsafeBytes { block.append($0) }
                direct.write(piece)
            case 1:
                let value = Int(generator.next() % 1_000_000_000)
                block.appendDecimal(value)
                direct.write(String(value))
            default:
                block.appendQuotedBase64(piece)
                direct.write("\"" + Base64.encode(piece) + "\"")
            }
        }
        block.close()
        // The first byte that differs, not the arrays: describing megabytes of difference takes minutes.
        let difference = zip(gathered.captured, direct.captured).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(gathered.captured.count == direct.captured.count)
        #expect(difference == nil, "the block and the buffer differ from byte \(difference ?? 0)")
    }
}
