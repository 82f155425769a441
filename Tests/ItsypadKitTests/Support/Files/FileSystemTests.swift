import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite struct FileSystemTests {
    let scratch = TemporaryDirectory()

    /// A mapped file reads as its bytes, before and after pages are given back (read again from
    /// the file); reading may start over. A missing file is none, an empty one has no bytes.
    @Test func aMappedFileReadsAsItsBytesWhateverWasGivenBack() throws {
        let path = scratch.path + "/big"
        let bytes = (0..<(3 << 20) + 123).map { UInt8(truncatingIfNeeded: $0 &* 131 >> 3) }
        try FileSystem.writeAtomically(path, bytes)
        let spool = FileTree(root: scratch.path)
        let mapped = try #require(try MappedFile.document(path, spoolingIn: spool))
        #expect(mapped.bytes.elementsEqual(bytes))
        for offset in [1 << 20, (2 << 20) + 5, 1 << 20, bytes.count, bytes.count + 9] {
            mapped.release(before: offset)
            #expect(mapped.bytes.elementsEqual(bytes), "after giving back the pages before \(offset)")
        }
        try FileSystem.writeAtomically(scratch.path + "/empty", [])
        #expect(try MappedFile.document(scratch.path + "/missing", spoolingIn: spool) == nil)
        #expect(try MappedFile.document(scratch.path + "/empty", spoolingIn: spool)?.bytes.isEmpty == true)
        #expect(!mapped.isCutShort)
    }

    /// Lines of every length around the head limit and the 1 MiB read size, and a torn tail.
    @Test(arguments: [[0, 1, 15, 16, 17, 3], [(1 << 20) - 1, 5, 1 << 20, (1 << 20) + 1, 40], [3 << 20, 0, 2]])
    func linesComeWithTheirOffsetLengthAndOnlyTheirFirstBytes(_ lengths: [Int]) throws {
        let limit = 16
        let lines = lengths.enumerated().map { index, length in (0..<length).map { UInt8(0x41 + ($0 + index) % 26) } }
        let path = scratch.path + "/lines"
        try FileSystem.writeAtomically(path, Array(lines.map { $0 + [0x0A] }.joined()) + Array("torn".utf8))
        let size = try #require(try FileSystem.read(path)).count
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var seen: [(offset: Int, length: Int, head: [UInt8])] = []
        try FileSystem.forEachLineHead(fd: fd, size: size, path: path, headLimit: limit) {
            seen.append(($0, $1, Array($2)))
        }
        #expect(seen.map(\.length) == lengths)
        #expect(seen.map(\.offset) == lengths.indices.map { lengths[..<$0].reduce(0) { $0 + $1 + 1 } })
        #expect(seen.map(\.head) == lines.map { Array($0.prefix(limit)) })
    }
}
