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
/// Format: a 64-byte header (magic `ITSYTAB1`, directory inode, mtime seconds
/// and nanoseconds, record count, body checksum, header checksum), then
/// records: id (16 bytes), name length and row length (4 bytes each, little
/// endian), name, row.
struct TabIndex {
    struct Record: Equatable {
        let id: PackedID
        let lastModified: Milliseconds
        let name: [UInt8]
        /// The tab's `tab ls` row, without its newline.
        let row: [UInt8]
    }

    static let fileName = "index"
    private static let magic = Array("ITSYTAB1".utf8)
    private static let headerSize = 64
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
    func forEach(_ visit: (PackedID, UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        try body.withUnsafeBufferPointer { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            for start in starts {
                let id = PackedID(high: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt64.self)),
                                  low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: start + 8, as: UInt64.self)))
                let nameLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start + 24, as: UInt32.self)))
                let rowLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start + 28, as: UInt32.self)))
                let name = start + TabIndex.recordHeaderSize
                try visit(id, UnsafeBufferPointer(rebasing: bytes[name..<name + nameLength]),
                          UnsafeBufferPointer(rebasing: bytes[name + nameLength..<name + nameLength + rowLength]))
            }
        }
    }

    /// The records, built whole (for a change).
    var records: [Record] {
        var records: [Record] = []
        body.withUnsafeBytes { raw in
            var index = 0
            forEach { id, name, row in
                let lastModified = Int64(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: starts[index] + 16, as: UInt64.self)))
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

    static func record(for tab: Tab) -> Record? {
        PackedID(tab.id).map { Record(id: $0, lastModified: tab.lastModified, name: Array(tab.name.utf8), row: row(for: tab)) }
    }

    /// Replaces (or with nil, removes) the record of `id`.
    mutating func update(id: PackedID, with record: Record?) {
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
            let named = wantedIsASCII && UTF8Check.isASCII(name)
                ? name.elementsEqual(wanted) : String(decoding: name, as: UTF8.self) == reference
            if id == asID || named || prefix?.matches(id) == true { matched.append(id) }
        }
        return matched
    }

    // MARK: File

    /// The index of `directory` if it is there and current; nil otherwise.
    static func load(directory: String, in tree: FileTree) -> TabIndex? {
        guard let stamp = DirectoryStamp(directory, in: tree),
              let bytes = try? tree.read(directory + "/" + fileName), bytes.count >= headerSize else { return nil }
        let starts = bytes.withUnsafeBytes { raw -> [Int]? in
            func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
            guard Array(raw[0..<8]) == magic, word(56) == checksum(UnsafeRawBufferPointer(rebasing: raw[0..<56])),
                  DirectoryStamp(inode: word(8), seconds: word(16), nanoseconds: word(24)) == stamp,
                  word(40) == checksum(UnsafeRawBufferPointer(rebasing: raw[headerSize...])) else { return nil }
            var starts: [Int] = []
            starts.reserveCapacity(Int(min(word(32), 1 << 20)))
            var position = headerSize
            while position + recordHeaderSize <= raw.count {
                let nameLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position + 24, as: UInt32.self)))
                let rowLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position + 28, as: UInt32.self)))
                guard nameLength <= raw.count, rowLength <= raw.count else { return nil }
                starts.append(position - headerSize)
                position += recordHeaderSize + nameLength + rowLength
            }
            guard position == raw.count, starts.count == Int(word(32)) else { return nil }
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

    /// Writes the index in place (a cache: no fsync; the checksums catch a torn write).
    func save(directory: String, in tree: FileTree) throws {
        let path = directory + "/" + TabIndex.fileName
        guard let fd = try tree.openFile(path, flags: O_RDWR | O_CREAT) else { throw FileSystemError(path: path, code: ENOENT, operation: "write") }
        defer { close(fd) }
        // Stamped after the file exists: creating it changes the directory.
        guard let stamp = DirectoryStamp(directory, in: tree) else { throw FileSystemError(path: directory, code: ENOENT, operation: "stat") }
        var header = TabIndex.magic
        for value in [stamp.inode, stamp.seconds, stamp.nanoseconds, UInt64(count)] { Binary.append(value, to: &header) }
        let records = body[bodyStart...]
        records.withUnsafeBytes { Binary.append(TabIndex.checksum($0), to: &header) }
        Binary.append(0, to: &header)
        header.withUnsafeBytes { Binary.append(TabIndex.checksum($0), to: &header) }
        if ftruncate(fd, 0) != 0 { throw FileSystem.fail("write", path) }
        try FileSystem.writeAll(fd: fd, header + Array(records), at: 0, path: path)
    }

    /// A 64-bit checksum, eight bytes at a time (the index is read on every lookup).
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var index = 0
        while index + 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0x0100_0000_01b3
            hash ^= hash >> 29
            index += 8
        }
        while index < bytes.count {
            hash = (hash ^ UInt64(bytes[index])) &* 0x0100_0000_01b3
            index += 1
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
        self.init(inode: status.inode, seconds: UInt64(bitPattern: status.modifiedSeconds),
                  nanoseconds: UInt64(bitPattern: status.modifiedNanoseconds))
    }
}
