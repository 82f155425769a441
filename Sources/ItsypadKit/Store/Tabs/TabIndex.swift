import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `tabs/index`: a rebuildable cache of every tab's id, name and `tab ls`
/// row, newest first, so that finding a tab by name or id prefix and listing
/// 10,000 tabs read one file instead of 10,000. It records the `tabs/`
/// directory's inode and modification time: any tab file written, renamed or
/// removed since changes them, and the index is then rebuilt from the files.
/// Only whole-file replacements are noticed (itsypad never edits a tab file in
/// place); a resolved tab is checked against its file all the same.
///
/// Format: a 96-byte header (magic `ITSYTAB4`, directory inode, mtime seconds
/// and nanoseconds, record count, checksum of the records, records' length,
/// bucket count, a zero word, rows' length, checksum of the rows, header
/// checksum), then the rows: what `tab ls` prints, each row and a newline,
/// newest first, so that a listing is one read and one write whatever the
/// number of tabs. Then the records, in the same order: id (16 bytes),
/// lastModified (8), name length and row length (4 bytes each, little endian),
/// name. Then keyed sections, so that `tab show NAME|PREFIX` reads a few dozen
/// bytes rather than the whole index (see `lookUp`): the ids in order with
/// their record's offset among the records (24 bytes each), and a hash table of
/// the names by their NFC bytes, in which names Swift holds equal fall together
/// (open addressing; 8 bytes a bucket: record offset + 1, 0 when empty).
/// Integers are little endian but the ids' bytes.
package struct TabIndex {
    package struct Record: Equatable {
        let id: PackedID
        let lastModified: Milliseconds
        let name: [UInt8]
        /// The tab's `tab ls` row, without its newline.
        let row: [UInt8]
    }

    package static let fileName = DataDirectoryLayout.tabIndexName
    private static let magic = Array("ITSYTAB4".utf8)
    private static let headerSize = 96
    private static let idEntrySize = 24
    private static let recordHeaderSize = 32

    /// The rows, then the records (each record's row is the next row), newest first (by lastModified,
    /// then id), as `tab ls` lists them: a file's bytes read in place (`rows` starts after its header),
    /// so that loading 10,000 records allocates nothing per tab.
    private var bytes: [UInt8]
    private var rows: Range<Int>
    /// Where each record starts in `bytes`.
    private var starts: [Int]

    init(records: [Record]) {
        var rows: [UInt8] = []
        var recordBytes: [UInt8] = []
        starts = []
        for record in records.sorted(by: TabIndex.newerFirst) {
            rows += record.row
            rows.append(0x0A)
            starts.append(recordBytes.count)
            recordBytes += record.id.bytes
            Binary.append(UInt64(bitPattern: record.lastModified), to: &recordBytes)
            for length in [record.name.count, record.row.count] {
                withUnsafeBytes(of: UInt32(length).littleEndian) { recordBytes += $0 }
            }
            recordBytes += record.name
        }
        starts = starts.map { $0 + rows.count }
        self.rows = 0..<rows.count
        bytes = rows + recordBytes
    }

    private static func newerFirst(_ a: Record, _ b: Record) -> Bool {
        (a.lastModified, a.id.string) > (b.lastModified, b.id.string)
    }

    var count: Int { starts.count }

    /// Where the records start in `bytes`.
    private var recordsStart: Int { rows.upperBound }

    /// Calls `body` with each record's id, name and row, newest first.
    package func forEach(_ visit: (PackedID, UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        try bytes.withUnsafeBufferPointer { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            var row = rows.lowerBound
            for start in starts {
                let id = PackedID(
                    high: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt64.self)),
                    low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: start + 8, as: UInt64.self)))
                let nameLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start + 24, as: UInt32.self)))
                let rowLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start + 28, as: UInt32.self)))
                let name = start + TabIndex.recordHeaderSize
                try visit(
                    id, UnsafeBufferPointer(rebasing: bytes[name..<name + nameLength]),
                    UnsafeBufferPointer(rebasing: bytes[row..<row + rowLength]))
                row += rowLength + 1
            }
        }
    }

    /// What `tab ls` prints: each row and a newline, newest first.
    package var listing: ArraySlice<UInt8> { bytes[rows] }

    /// The records, built whole (for a change).
    var records: [Record] {
        var records: [Record] = []
        bytes.withUnsafeBytes { raw in
            var index = 0
            forEach { id, name, row in
                let lastModified = Int64(
                    bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: starts[index] + 16, as: UInt64.self)))
                records.append(Record(id: id, lastModified: lastModified, name: Array(name), row: Array(row)))
                index += 1
            }
        }
        return records
    }

    /// The row `tab ls` prints for a tab.
    static func row(for tab: Tab) -> [UInt8] {
        var row = Array(Identifier.short(tab.id).utf8)
        row.append(0x09)
        row += Text.preview(tab.name, limit: 60).utf8
        row.append(0x09)
        row += tab.language.utf8
        row.append(0x09)
        Time.appendISO8601(tab.lastModified, to: &row)
        return row
    }

    package static func record(for tab: Tab) -> Record? {
        PackedID(tab.id).map { Record(id: $0, lastModified: tab.lastModified, name: Array(tab.name.utf8), row: row(for: tab)) }
    }

    /// Replaces (or with nil, removes) the record of `id`.
    package mutating func update(id: PackedID, with record: Record?) {
        var records = self.records.filter { $0.id != id }
        if let record { records.append(record) }
        self = TabIndex(records: records)
    }

    /// The tabs a reference may name, by the rule `DataStore.resolveTab` states: each tab whose id is
    /// the reference, whose name equals it (Swift's `String` equality) or whose id it prefixes, newest first.
    func matches(_ reference: String) -> [PackedID] {
        let lowered = reference.lowercased()
        let asID = PackedID(canonical: lowered)
        let prefix = Identifier.isPrefixCandidate(reference) ? PackedIDPrefix(lowered) : nil
        var matched: [PackedID] = []
        forEach { id, name, _ in
            let named = String(decoding: name, as: UTF8.self) == reference
            if id == asID || named || prefix?.matches(id) == true { matched.append(id) }
        }
        return matched
    }

    // MARK: File

    /// The index of `directory` if it is there and current; nil otherwise.
    package static func load(directory: String, in tree: FileTree) -> TabIndex? {
        // Only the header, the rows and the records are read: the keyed sections are `lookUp`'s.
        guard let file = read(directory: directory, in: tree, through: { $0.idsStart }) else { return nil }
        let (header, bytes) = file
        let starts = bytes.withUnsafeBytes { raw -> [Int]? in
            guard header.rowsChecksum == checksum(UnsafeRawBufferPointer(rebasing: raw[headerSize..<header.recordsStart])),
                header.checksum == checksum(UnsafeRawBufferPointer(rebasing: raw[header.recordsStart...]))
            else { return nil }
            var starts: [Int] = []
            starts.reserveCapacity(header.count)
            var position = header.recordsStart
            var rowsLength = 0
            while position + recordHeaderSize <= raw.count {
                let nameLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position + 24, as: UInt32.self)))
                let rowLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position + 28, as: UInt32.self)))
                guard nameLength <= raw.count, rowLength <= raw.count else { return nil }
                starts.append(position)
                position += recordHeaderSize + nameLength
                rowsLength += rowLength + 1
            }
            guard position == raw.count, starts.count == header.count, rowsLength == header.rowsLength else { return nil }
            return starts
        }
        guard let starts else { return nil }
        return TabIndex(bytes: bytes, rows: headerSize..<header.recordsStart, starts: starts)
    }

    /// Writes what `tab ls` prints (`listing`) straight from the index of `directory` if it is there and
    /// current: a header and the rows, whatever the number of tabs. False, with nothing written, otherwise.
    /// The rows go through one reused buffer, checksummed in a first pass and written in a second:
    /// reading every row into fresh memory would cost more than the rest of `tab ls`. The data
    /// directory's lock, held by the caller, keeps other writers of the index out between the passes.
    package static func writeListing(directory: String, in tree: FileTree, to write: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool
    {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
        defer { buffer.deallocate() }
        let path = directory + "/" + fileName
        let opened = withCurrentFile(directory: directory, in: tree) { fd, header, _ -> Bool in
            var checksum = Checksum()
            let whole = (try? readRows(fd: fd, header: header, through: buffer, path: path) { checksum.add($0) }) ?? false
            return whole && checksum.value == header.rowsChecksum
        }
        guard let (fd, header, rowsAreCurrent) = opened else { return false }
        defer { close(fd) }
        guard rowsAreCurrent else { return false }
        guard try readRows(fd: fd, header: header, through: buffer, path: path, write) else {
            throw ItsypadError.failure("\(path) changed while tab ls was reading it")
        }
        return true
    }

    /// Hands `body` the rows of the index open as `fd`, a buffer's length at a time; false when the file ends early.
    private static func readRows(
        fd: Int32, header: Header, through buffer: UnsafeMutableRawBufferPointer, path: String,
        _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        var offset = headerSize
        while offset < header.recordsStart {
            let wanted = UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, header.recordsStart - offset)])
            guard try FileSystem.read(fd: fd, offset: offset, into: wanted, path: path) == wanted.count else { return false }
            try body(UnsafeRawBufferPointer(wanted))
            offset += wanted.count
        }
        return true
    }

    /// The file's bytes from its start to `end` (of its header), when the header agrees with the file and the
    /// directory: in one buffer, which the index keeps, so that nothing is copied again.
    private static func read(directory: String, in tree: FileTree, through end: (Header) -> Int) -> (header: Header, bytes: [UInt8])? {
        let path = directory + "/" + fileName
        let opened = withCurrentFile(directory: directory, in: tree) { fd, header, headerBytes -> [UInt8]? in
            // Read again with the header: the file may have changed in between.
            guard let bytes = try? FileSystem.read(fd: fd, offset: 0, count: end(header), path: path), bytes.count == end(header),
                bytes[..<headerSize].elementsEqual(headerBytes)
            else { return nil }
            return bytes
        }
        guard let (fd, header, bytes) = opened else { return nil }
        close(fd)
        return bytes.map { (header, $0) }
    }

    /// The index file opened (the caller closes `fd`) with its header, when the header agrees with the file and
    /// the directory, and what `body` made of them; nil (the file closed) when there is no such file.
    private static func withCurrentFile<Result>(
        directory: String, in tree: FileTree, _ body: (_ fd: Int32, _ header: Header, _ headerBytes: [UInt8]) -> Result
    ) -> (fd: Int32, header: Header, result: Result)? {
        let path = directory + "/" + fileName
        guard let stamp = DirectoryStamp(directory, in: tree), let fd = try? tree.openFile(path, flags: O_RDONLY) else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, let headerBytes = try? FileSystem.read(fd: fd, offset: 0, count: headerSize, path: path),
            let header = headerBytes.withUnsafeBytes({ Header($0, fileSize: Int(info.st_size)) }), header.stamp == stamp
        else {
            close(fd)
            return nil
        }
        return (fd, header, body(fd, header, headerBytes))
    }

    /// Over the file as read, header included, so that it is not copied again.
    private init(bytes: [UInt8], rows: Range<Int>, starts: [Int]) {
        self.bytes = bytes
        self.rows = rows
        self.starts = starts
    }

    /// Writes the index in place (a cache: no fsync; the checksums and the size catch a torn write).
    package func save(directory: String, in tree: FileTree) throws {
        let path = directory + "/" + TabIndex.fileName
        guard let fd = try tree.openFile(path, flags: O_RDWR | O_CREAT) else {
            throw FileSystemError(path: path, code: ENOENT, operation: "write")
        }
        defer { close(fd) }
        // Stamped after the file exists: creating it changes the directory.
        guard let stamp = DirectoryStamp(directory, in: tree) else {
            throw FileSystemError(path: directory, code: ENOENT, operation: "stat")
        }
        let keyed = keyedSections()
        let records = bytes[recordsStart...]
        // The checksums cover the rows and the records, which a listing reads whole; `lookUp` checks the bounds of what
        // it reads in the keyed sections, and a tab it names is checked against its file.
        var header = TabIndex.magic
        let fields = [
            stamp.inode, stamp.seconds, stamp.nanoseconds, UInt64(count), records.withUnsafeBytes(TabIndex.checksum),
            UInt64(records.count), UInt64(keyed.buckets), 0, UInt64(rows.count),
            listing.withUnsafeBytes(TabIndex.checksum),
        ]
        for value in fields { Binary.append(value, to: &header) }
        header.withUnsafeBytes { Binary.append(TabIndex.checksum($0), to: &header) }
        if ftruncate(fd, 0) != 0 { throw FileSystem.fail("write", path) }
        try FileSystem.writeAll(fd: fd, header + Array(bytes[rows.lowerBound...]) + keyed.bytes, at: 0, path: path)
    }

    /// The sections after the records: ids in order with their record's offset, and the hash table of names.
    private func keyedSections() -> (bytes: [UInt8], buckets: Int) {
        var ids: [(id: PackedID, offset: Int)] = []
        var names: [(hash: UInt64, offset: Int)] = []
        var index = 0
        forEach { id, name, _ in
            let offset = starts[index] - recordsStart
            index += 1
            ids.append((id, offset))
            names.append((TabIndex.nameHash(name), offset))
        }
        ids.sort { ($0.id.high, $0.id.low) < ($1.id.high, $1.id.low) }
        var buckets = 8
        while buckets < 2 * names.count { buckets *= 2 }
        var table = [UInt64](repeating: 0, count: buckets)
        for name in names {
            var bucket = Int(name.hash & UInt64(buckets - 1))
            while table[bucket] != 0 { bucket = (bucket + 1) & (buckets - 1) }
            table[bucket] = UInt64(name.offset + 1)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(ids.count * TabIndex.idEntrySize + buckets * 8)
        for entry in ids {
            bytes += entry.id.bytes
            Binary.append(UInt64(entry.offset), to: &bytes)
        }
        for value in table { Binary.append(value, to: &bytes) }
        return (bytes, buckets)
    }

    /// FNV-1a of a name's NFC bytes: stable across runs, unlike `Hasher`, and the same for names
    /// Swift's `String` holds equal.
    static func nameHash(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        String(decoding: name, as: UTF8.self)._nfcCodeUnits.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0100_0000_01b3 }
    }

    /// The header's fields, when its magic, checksum and sizes agree with a file of `fileSize` bytes.
    private struct Header {
        let stamp: DirectoryStamp
        let count: Int
        let checksum: UInt64
        let bodyLength: Int
        let buckets: Int
        let rowsLength: Int
        let rowsChecksum: UInt64

        var recordsStart: Int { TabIndex.headerSize + rowsLength }
        var idsStart: Int { recordsStart + bodyLength }
        var bucketsStart: Int { idsStart + count * TabIndex.idEntrySize }

        init?(_ raw: UnsafeRawBufferPointer, fileSize: Int) {
            guard raw.count == TabIndex.headerSize, Array(raw[0..<8]) == TabIndex.magic else { return nil }
            func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
            guard word(88) == TabIndex.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<88])) else { return nil }
            // Sizes are range-checked before any arithmetic: a damaged header must not trap.
            let limit = UInt64(1 << 40)
            guard word(32) <= 1 << 24, word(48) <= limit, word(56) <= 1 << 26, word(64) == 0, word(72) <= limit else {
                return nil
            }
            stamp = DirectoryStamp(inode: word(8), seconds: word(16), nanoseconds: word(24))
            count = Int(word(32))
            checksum = word(40)
            bodyLength = Int(word(48))
            buckets = Int(word(56))
            rowsLength = Int(word(72))
            rowsChecksum = word(80)
            guard buckets >= 1, buckets & (buckets - 1) == 0, bucketsStart + buckets * 8 == fileSize else { return nil }
        }
    }

    /// The tabs a reference may name, by the rule of `matches`, from the keyed
    /// sections with a few small reads: what `tab show NAME|PREFIX` costs does not
    /// grow with the number of tabs. nil when the index is missing, stale or
    /// damaged: `matches` on the tabs answers then.
    static func lookUp(_ reference: String, directory: String, in tree: FileTree) -> [PackedID]? {
        let wanted = Array(reference.utf8)
        guard let stamp = DirectoryStamp(directory, in: tree) else { return nil }
        let path = directory + "/" + fileName
        guard let fd = try? tree.openFile(path, flags: O_RDONLY) else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        func read(_ offset: Int, _ count: Int) -> [UInt8]? {
            guard count > 0 else { return [] }
            guard let bytes = try? FileSystem.read(fd: fd, offset: offset, count: count, path: path), bytes.count == count else {
                return nil
            }
            return bytes
        }
        func word(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
            bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        }
        /// An id's 16 bytes (stored in text order) at `offset`.
        func id(_ bytes: [UInt8], _ offset: Int) -> PackedID {
            bytes.withUnsafeBytes {
                PackedID(
                    high: UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
                    low: UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
            }
        }
        guard let headerBytes = read(0, headerSize),
            let header = headerBytes.withUnsafeBytes({ Header($0, fileSize: Int(info.st_size)) }), header.stamp == stamp
        else { return nil }
        /// A record's id and name, read at its offset among the records; nil when the offset is out of bounds.
        func record(at offset: Int) -> (id: PackedID, name: [UInt8])? {
            guard offset >= 0, offset + recordHeaderSize <= header.bodyLength,
                let fields = read(header.recordsStart + offset, recordHeaderSize)
            else { return nil }
            let nameLength = Int(fields.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 24, as: UInt32.self)) })
            guard offset + recordHeaderSize + nameLength <= header.bodyLength,
                let name = read(header.recordsStart + offset + recordHeaderSize, nameLength)
            else { return nil }
            return (id(fields, 0), name)
        }
        // Offsets and ids, sorted and made unique at the end (not a dictionary: see `FileTree.openDirectory` on run-time
        // conformance searches, which a dictionary keyed by Int would cost this lookup).
        var found: [(offset: Int, id: PackedID)] = []
        // By name: the names' hash table; names Swift holds equal have the same NFC bytes.
        if header.count > 0 {
            var bucket = Int(wanted.withUnsafeBufferPointer(nameHash) & UInt64(header.buckets - 1))
            for _ in 0..<header.buckets {
                guard let entry = read(header.bucketsStart + bucket * 8, 8) else { return nil }
                let value = word(entry, 0)
                if value == 0 { break }
                guard value <= UInt64(header.bodyLength), let named = record(at: Int(value) - 1) else { return nil }
                if String(decoding: named.name, as: UTF8.self) == reference {
                    found.append((Int(value) - 1, named.id))
                }
                bucket = (bucket + 1) & (header.buckets - 1)
            }
        }
        // By id or id prefix: a run of the ordered ids, found by bisection.
        if Identifier.isPrefixCandidate(reference), let prefix = PackedIDPrefix(reference.lowercased()) {
            func entry(_ position: Int) -> (id: PackedID, offset: UInt64)? {
                guard let bytes = read(header.idsStart + position * idEntrySize, idEntrySize) else { return nil }
                return (id(bytes, 0), word(bytes, 16))
            }
            let smallest = prefix.smallest
            var low = 0, high = header.count
            while low < high {
                let middle = (low + high) / 2
                guard let candidate = entry(middle) else { return nil }
                if (candidate.id.high, candidate.id.low) < (smallest.high, smallest.low) { low = middle + 1 } else { high = middle }
            }
            while low < header.count {
                guard let candidate = entry(low) else { return nil }
                guard prefix.matches(candidate.id) else { break }
                guard candidate.offset <= UInt64(header.bodyLength) else { return nil }
                found.append((Int(candidate.offset), candidate.id))
                low += 1
            }
        }
        // Newest first, as the records are stored; a tab found both by name and by id once.
        found.sort { $0.offset < $1.offset }
        var ids: [PackedID] = []
        for position in found.indices where position == 0 || found[position - 1].offset != found[position].offset {
            ids.append(found[position].id)
        }
        return ids
    }

    /// A 64-bit checksum, 32 bytes at a time in four independent lanes, so that the
    /// multiplications overlap (`tab ls` checks half a MiB of rows at 10,000 tabs).
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var checksum = Checksum()
        checksum.add(bytes)
        return checksum.value
    }

    /// `checksum(_:)` over bytes that come in pieces: every piece but the last a multiple of 32
    /// bytes long, so that the four lanes see the same words as over the whole.
    struct Checksum {
        private static let prime: UInt64 = 0x0100_0000_01b3
        private var lanes: (UInt64, UInt64, UInt64, UInt64) = (0xcbf2_9ce4_8422_2325, 1, 2, 3)
        private var count = 0
        /// The last piece's bytes past its last whole block.
        private var tail: [UInt8] = []

        mutating func add(_ bytes: UnsafeRawBufferPointer) {
            precondition(tail.isEmpty, "only the last piece may end inside a block")
            count += bytes.count
            // Through the base address: no bounds check per word.
            guard let base = bytes.baseAddress else { return }
            let blocks = bytes.count / 32
            for block in 0..<blocks {
                let offset = block &* 32
                lanes.0 = (lanes.0 ^ base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* Self.prime
                lanes.1 = (lanes.1 ^ base.loadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self)) &* Self.prime
                lanes.2 = (lanes.2 ^ base.loadUnaligned(fromByteOffset: offset &+ 16, as: UInt64.self)) &* Self.prime
                lanes.3 = (lanes.3 ^ base.loadUnaligned(fromByteOffset: offset &+ 24, as: UInt64.self)) &* Self.prime
            }
            tail = Array(UnsafeRawBufferPointer(rebasing: bytes[(blocks * 32)...]))
        }

        var value: UInt64 {
            var hash = lanes.0
            for lane in [lanes.1, lanes.2, lanes.3, UInt64(count)] {
                hash = (hash ^ (hash >> 29) ^ lane) &* Self.prime
            }
            for byte in tail {
                hash = (hash ^ UInt64(byte)) &* Self.prime
            }
            return hash
        }
    }
}

/// What identifies a directory's listing at one moment: any entry created,
/// renamed or removed in it changes its modification time.
struct DirectoryStamp: Equatable {
    let inode: UInt64
    let seconds: UInt64
    let nanoseconds: UInt64

    init(inode: UInt64, seconds: UInt64, nanoseconds: UInt64) {
        self.inode = inode
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    init?(_ directory: String, in tree: FileTree) {
        guard let status = (try? tree.status(directory)) ?? nil, status.isDirectory else { return nil }
        self.init(
            inode: status.inode, seconds: UInt64(bitPattern: status.modifiedSeconds),
            nanoseconds: UInt64(bitPattern: status.modifiedNanoseconds))
    }
}
