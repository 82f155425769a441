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
/// Format: a 96-byte header (magic `ITSYTAB2`, directory inode, mtime seconds
/// and nanoseconds, record count, checksum of the records, records' length,
/// bucket count, other-name count, two reserved words, header checksum), then records: id (16 bytes), lastModified (8), name length and
/// row length (4 bytes each, little endian), name, row. Then keyed sections,
/// so that `tab show NAME|PREFIX` reads a few dozen bytes rather than the whole
/// index (see `lookUp`): the ids in order with their record's offset (24 bytes
/// each), a hash table of ASCII names (open addressing; 8 bytes a bucket:
/// record offset + 1, 0 when empty), and the offsets of the other names'
/// records (8 bytes each). Integers are little endian but the ids' bytes.
package struct TabIndex {
    package struct Record: Equatable {
        let id: PackedID
        let lastModified: Milliseconds
        let name: [UInt8]
        /// The tab's `tab ls` row, without its newline.
        let row: [UInt8]
    }

    package static let fileName = "index"
    private static let magic = Array("ITSYTAB2".utf8)
    private static let headerSize = 96
    private static let idEntrySize = 24
    private static let recordHeaderSize = 32

    /// The records as stored, newest first (by lastModified, then id), as `tab ls` lists them;
    /// read in place, so that loading 10,000 of them allocates nothing per tab.
    private var body: [UInt8]
    private var bodyStart = 0
    private var starts: [Int]

    init(records: [Record]) {
        body = []
        starts = []
        for record in records.sorted(by: TabIndex.newerFirst) { append(record) }
    }

    private static func newerFirst(_ a: Record, _ b: Record) -> Bool {
        (a.lastModified, a.id.string) > (b.lastModified, b.id.string)
    }

    private mutating func append(_ record: Record) {
        starts.append(body.count)
        body += record.id.bytes
        Binary.append(UInt64(bitPattern: record.lastModified), to: &body)
        for length in [record.name.count, record.row.count] { withUnsafeBytes(of: UInt32(length).littleEndian) { body += $0 } }
        body += record.name
        body += record.row
    }

    var count: Int { starts.count }

    /// Calls `body` with each record's id, name and row, newest first.
    package func forEach(_ visit: (PackedID, UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        try body.withUnsafeBufferPointer { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            for start in starts {
                let id = PackedID(
                    high: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt64.self)),
                    low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: start + 8, as: UInt64.self)))
                let nameLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start + 24, as: UInt32.self)))
                let rowLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start + 28, as: UInt32.self)))
                let name = start + TabIndex.recordHeaderSize
                try visit(
                    id, UnsafeBufferPointer(rebasing: bytes[name..<name + nameLength]),
                    UnsafeBufferPointer(rebasing: bytes[name + nameLength..<name + nameLength + rowLength]))
            }
        }
    }

    /// What `tab ls` prints: each row and a newline, newest first, handed to `write` in pieces of at
    /// most `pieceSize` bytes (a longer row on its own), copied once from the index into one reused buffer.
    package func forEachRowPiece(pieceSize: Int, _ write: (UnsafeRawBufferPointer) -> Void) {
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: pieceSize, alignment: 1)
        defer { piece.deallocate() }
        var used = 0
        func flush() {
            if used > 0 { write(UnsafeRawBufferPointer(rebasing: piece[..<used])) }
            used = 0
        }
        body.withUnsafeBytes { raw in
            for start in starts {
                let nameLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start + 24, as: UInt32.self)))
                let rowLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start + 28, as: UInt32.self)))
                let rowStart = start + TabIndex.recordHeaderSize + nameLength
                let row = UnsafeRawBufferPointer(rebasing: raw[rowStart..<rowStart + rowLength])
                if used + rowLength + 1 > pieceSize { flush() }
                if rowLength + 1 > pieceSize {
                    write(row)
                    piece[0] = 0x0A
                    used = 1
                    continue
                }
                UnsafeMutableRawBufferPointer(rebasing: piece[used..<used + rowLength]).copyMemory(from: row)
                piece[used + rowLength] = 0x0A
                used += rowLength + 1
            }
        }
        flush()
    }

    /// The records, built whole (for a change).
    var records: [Record] {
        var records: [Record] = []
        body.withUnsafeBytes { raw in
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
        let wanted = Array(reference.utf8)
        let wantedIsASCII = wanted.allSatisfy { $0 < 0x80 }
        let prefix = Identifier.isPrefixCandidate(reference) ? PackedIDPrefix(lowered) : nil
        var matched: [PackedID] = []
        forEach { id, name, _ in
            // Two ASCII strings are equal only byte for byte; anything else goes by Swift's rule.
            let named =
                wantedIsASCII && UTF8Check.isASCII(name)
                ? name.elementsEqual(wanted) : String(decoding: name, as: UTF8.self) == reference
            if id == asID || named || prefix?.matches(id) == true { matched.append(id) }
        }
        return matched
    }

    // MARK: File

    /// The index of `directory` if it is there and current; nil otherwise.
    package static func load(directory: String, in tree: FileTree) -> TabIndex? {
        let path = directory + "/" + fileName
        guard let stamp = DirectoryStamp(directory, in: tree), let fd = try? tree.openFile(path, flags: O_RDONLY) else { return nil }
        defer { close(fd) }
        var info = stat()
        // Only the header and the records are read: the keyed sections are `lookUp`'s.
        guard fstat(fd, &info) == 0, let headerBytes = try? FileSystem.read(fd: fd, offset: 0, count: headerSize, path: path),
            let header = headerBytes.withUnsafeBytes({ Header($0, fileSize: Int(info.st_size)) }), header.stamp == stamp,
            // Read again with the header, into the one buffer the index keeps: the records are not copied.
            let bytes = try? FileSystem.read(fd: fd, offset: 0, count: headerSize + header.bodyLength, path: path),
            bytes.count == headerSize + header.bodyLength, bytes[..<headerSize].elementsEqual(headerBytes)
        else { return nil }
        let starts = bytes.withUnsafeBytes { raw -> [Int]? in
            guard header.checksum == checksum(UnsafeRawBufferPointer(rebasing: raw[headerSize...])) else { return nil }
            var starts: [Int] = []
            starts.reserveCapacity(header.count)
            var position = headerSize
            while position + recordHeaderSize <= raw.count {
                let nameLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position + 24, as: UInt32.self)))
                let rowLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position + 28, as: UInt32.self)))
                guard nameLength <= raw.count, rowLength <= raw.count else { return nil }
                starts.append(position - headerSize)
                position += recordHeaderSize + nameLength + rowLength
            }
            guard position == raw.count, starts.count == header.count else { return nil }
            return starts
        }
        guard let starts else { return nil }
        return TabIndex(body: bytes, starts: starts.map { $0 + headerSize }, bodyStart: headerSize)
    }

    /// Over the file as read, header included (`bodyStart` bytes), so that it is not copied again.
    private init(body: [UInt8], starts: [Int], bodyStart: Int) {
        self.body = body
        self.starts = starts
        self.bodyStart = bodyStart
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
        let records = body[bodyStart...]
        // The checksum covers the records, which a listing reads whole; `lookUp` checks the bounds of what it reads
        // in the keyed sections, and a tab it names is checked against its file.
        var header = TabIndex.magic
        let fields = [
            stamp.inode, stamp.seconds, stamp.nanoseconds, UInt64(count), records.withUnsafeBytes(TabIndex.checksum),
            UInt64(records.count), UInt64(keyed.buckets), UInt64(keyed.others), 0, 0,
        ]
        for value in fields { Binary.append(value, to: &header) }
        header.withUnsafeBytes { Binary.append(TabIndex.checksum($0), to: &header) }
        if ftruncate(fd, 0) != 0 { throw FileSystem.fail("write", path) }
        try FileSystem.writeAll(fd: fd, header + Array(records) + keyed.bytes, at: 0, path: path)
    }

    /// The sections after the records: ids in order with their record's offset,
    /// the hash table of ASCII names, the offsets of the other names' records.
    private func keyedSections() -> (bytes: [UInt8], buckets: Int, others: Int) {
        var ids: [(id: PackedID, offset: Int)] = []
        var asciiNames: [(hash: UInt64, offset: Int)] = []
        var others: [Int] = []
        var index = 0
        forEach { id, name, _ in
            let offset = starts[index] - bodyStart
            index += 1
            ids.append((id, offset))
            if UTF8Check.isASCII(name) { asciiNames.append((TabIndex.nameHash(name), offset)) } else { others.append(offset) }
        }
        ids.sort { ($0.id.high, $0.id.low) < ($1.id.high, $1.id.low) }
        var buckets = 8
        while buckets < 2 * asciiNames.count { buckets *= 2 }
        var table = [UInt64](repeating: 0, count: buckets)
        for name in asciiNames {
            var bucket = Int(name.hash & UInt64(buckets - 1))
            while table[bucket] != 0 { bucket = (bucket + 1) & (buckets - 1) }
            table[bucket] = UInt64(name.offset + 1)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(ids.count * TabIndex.idEntrySize + (buckets + others.count) * 8)
        for entry in ids {
            bytes += entry.id.bytes
            Binary.append(UInt64(entry.offset), to: &bytes)
        }
        for value in table + others.map(UInt64.init) { Binary.append(value, to: &bytes) }
        return (bytes, buckets, others.count)
    }

    /// FNV-1a of a name's bytes: stable across runs, unlike `Hasher`.
    static func nameHash(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        name.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0100_0000_01b3 }
    }

    /// The header's fields, when its magic, checksum and sizes agree with a file of `fileSize` bytes.
    private struct Header {
        let stamp: DirectoryStamp
        let count: Int
        let checksum: UInt64
        let bodyLength: Int
        let buckets: Int
        let others: Int

        var idsStart: Int { TabIndex.headerSize + bodyLength }
        var bucketsStart: Int { idsStart + count * TabIndex.idEntrySize }
        var othersStart: Int { bucketsStart + buckets * 8 }

        init?(_ raw: UnsafeRawBufferPointer, fileSize: Int) {
            guard raw.count == TabIndex.headerSize, Array(raw[0..<8]) == TabIndex.magic else { return nil }
            func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
            guard word(88) == TabIndex.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<88])) else { return nil }
            // Sizes are range-checked before any arithmetic: a damaged header must not trap.
            let limit = UInt64(1 << 40)
            guard word(32) <= 1 << 24, word(48) <= limit, word(56) <= 1 << 26, word(64) <= word(32) else { return nil }
            stamp = DirectoryStamp(inode: word(8), seconds: word(16), nanoseconds: word(24))
            count = Int(word(32))
            checksum = word(40)
            bodyLength = Int(word(48))
            buckets = Int(word(56))
            others = Int(word(64))
            guard buckets >= 1, buckets & (buckets - 1) == 0, othersStart + others * 8 == fileSize else { return nil }
        }
    }

    /// The tabs a reference may name, by the rule of `matches`, from the keyed
    /// sections with a few small reads: what `tab show NAME|PREFIX` costs does not
    /// grow with the number of tabs. nil when the index is missing, stale or
    /// damaged, or the reference is not ASCII (names then compare by Swift's
    /// rule, not byte for byte): `matches` on the loaded index answers then.
    static func lookUp(_ reference: String, directory: String, in tree: FileTree) -> [PackedID]? {
        let wanted = Array(reference.utf8)
        guard wanted.allSatisfy({ $0 < 0x80 }), let stamp = DirectoryStamp(directory, in: tree) else { return nil }
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
            guard offset >= 0, offset + recordHeaderSize <= header.bodyLength, let fields = read(headerSize + offset, recordHeaderSize)
            else { return nil }
            let nameLength = Int(fields.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 24, as: UInt32.self)) })
            guard offset + recordHeaderSize + nameLength <= header.bodyLength,
                let name = read(headerSize + offset + recordHeaderSize, nameLength)
            else { return nil }
            return (id(fields, 0), name)
        }
        // Offsets and ids, sorted and made unique at the end (not a dictionary: see `FileTree.openDirectory` on run-time
        // conformance searches, which a dictionary keyed by Int would cost this lookup).
        var found: [(offset: Int, id: PackedID)] = []
        // By name: the ASCII names' hash table, then the other names by Swift's equality.
        if header.count > 0 {
            var bucket = Int(wanted.withUnsafeBufferPointer(nameHash) & UInt64(header.buckets - 1))
            for _ in 0..<header.buckets {
                guard let entry = read(header.bucketsStart + bucket * 8, 8) else { return nil }
                let value = word(entry, 0)
                if value == 0 { break }
                guard value <= UInt64(header.bodyLength), let named = record(at: Int(value) - 1) else { return nil }
                if named.name == wanted { found.append((Int(value) - 1, named.id)) }
                bucket = (bucket + 1) & (header.buckets - 1)
            }
        }
        if header.others > 0 {
            guard let offsets = read(header.othersStart, header.others * 8) else { return nil }
            for position in 0..<header.others {
                let offset = word(offsets, position * 8)
                guard offset <= UInt64(header.bodyLength), let named = record(at: Int(offset)) else { return nil }
                if String(decoding: named.name, as: UTF8.self) == reference { found.append((Int(offset), named.id)) }
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

    /// A 64-bit checksum, eight bytes at a time (the index is read on every lookup).
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        // Through the base address: no bounds check per word (`tab ls` checks a MiB of records at 10,000 tabs).
        guard let base = bytes.baseAddress else { return hash }
        let words = bytes.count / 8
        for word in 0..<words {
            hash = (hash ^ base.loadUnaligned(fromByteOffset: word &* 8, as: UInt64.self)) &* 0x0100_0000_01b3
            hash ^= hash >> 29
        }
        for index in words * 8..<bytes.count {
            hash = (hash ^ UInt64(base.load(fromByteOffset: index, as: UInt8.self))) &* 0x0100_0000_01b3
        }
        return hash
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
