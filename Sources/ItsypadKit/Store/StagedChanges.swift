import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// copy_file_range(2): Glibc declares it only under _GNU_SOURCE, which the Swift module map does not set.
@_silgen_name("copy_file_range")
private func linuxCopyFileRange(
    _ input: Int32, _ inputOffset: UnsafeMutablePointer<Int64>?, _ output: Int32,
    _ outputOffset: UnsafeMutablePointer<Int64>?, _ count: Int, _ flags: UInt32
) -> Int

/// sync_file_range(2), declared under _GNU_SOURCE too.
@_silgen_name("sync_file_range")
private func linuxSyncFileRange(_ fd: Int32, _ offset: Int64, _ count: Int64, _ flags: UInt32) -> Int32

/// Changes to several files of the data directory that happen all at once or
/// not at all (an import). Every new file is first written in full under
/// `.staged/` and made durable; a `commit` marker then records the decision,
/// and only after it are the files moved into place. A failure before the
/// marker (a full disk, an invalid document, an interrupt) leaves the data
/// directory as it was; a crash after it is finished by the next command that
/// opens the data directory (`recover`), and so is an error after it (a full
/// disk, EIO): the commit tries once more, then leaves the rest to that
/// command (`Unfinished`). Every file is reached through the
/// data directory's `FileTree`: a symlink planted in the stage is never followed.
package final class StagedChanges {
    private static let marker = "commit"

    /// A committed change that could not all be moved into place: the next command that opens the
    /// data directory finishes it (`recover`), so it is neither dropped nor left half done.
    package struct Unfinished: Error {
        /// Why the files could not be moved, as the system said it.
        package let reason: String
    }

    let tree: FileTree
    private var root: String { tree.root }
    private var stage: String { DataDirectoryLayout(root: root).staged }
    /// Where scratch files go that are not staged (see `SortedRuns`): the stage's own directory.
    var scratchDirectory: String { stage }
    /// The files staged, in the order they came, and as a set (an import stages 10,000 tab files).
    private var files: [String] = []
    private var staged = Set<String>()
    private var removals: [String] = []
    /// Set once the marker is written: from then on the change is only ever finished, never dropped.
    private var committed = false

    /// Starts an empty stage (an uncommitted leftover of a crash is dropped first).
    package init(in tree: FileTree) throws {
        self.tree = tree
        try storeOperation {
            try tree.removeTree(stage)
            try tree.makeDirectory(stage)
        }
    }

    /// `path` (inside the data directory) relative to it, as the stage names files.
    package func relative(_ path: String) -> String { DataDirectoryLayout(root: root).relative(path) }

    /// A file that will replace `relativePath`, written a piece at a time; with
    /// `copyingCurrent` it starts as a copy of the current file.
    package func file(_ relativePath: String, copyingCurrent: Bool = false) throws -> StagedFile {
        try storeOperation {
            let file = try StagedFile(path: stage + "/" + relativePath, in: tree)
            if staged.insert(relativePath).inserted { files.append(relativePath) }
            if copyingCurrent { try file.copy(from: root + "/" + relativePath, in: tree) }
            return file
        }
    }

    /// A whole file that will replace `relativePath`.
    package func write(_ relativePath: String, _ bytes: [UInt8]) throws {
        let file = try file(relativePath)
        try file.append(bytes)
        try file.close()
    }

    /// Whole files that will replace those of the same names in `relativeDirectory`, written
    /// together (an import stages 10,000 tab files: see `FileTree.writeFiles`).
    package func write(_ files: [(name: String, bytes: [UInt8])], in relativeDirectory: String) throws {
        try storeOperation { try tree.writeFiles(files, in: stage + "/" + relativeDirectory) }
        for file in files where staged.insert(relativeDirectory + "/" + file.name).inserted {
            self.files.append(relativeDirectory + "/" + file.name)
        }
    }

    /// Whole files written one at a time into `relativeDirectory`, which is opened once (an import
    /// stages each of 10,000 images as it reads them, and holds none).
    package func directory(_ relativeDirectory: String) throws -> StagedDirectory {
        StagedDirectory(try storeOperation { try tree.directory(stage + "/" + relativeDirectory, creating: true) }) {
            [unowned self] name in
            if staged.insert(relativeDirectory + "/" + name).inserted { files.append(relativeDirectory + "/" + name) }
        }
    }

    /// `relativePath` will be removed.
    package func remove(_ relativePath: String) { removals.append(relativePath) }

    /// Makes the stage durable (one syncfs), records the decision, then moves
    /// everything into place. Past the marker the changes are committed.
    package func commit() throws {
        try storeOperation {
            // A few files are synced one by one; thousands (an import of many tabs) with one syncfs.
            if files.count > FileTree.filesSyncedOneByOne {
                try tree.syncFileSystem(of: stage)
            } else {
                for file in files { try tree.syncFile(stage + "/" + file) }
                // Their names too: a marker must never point at files a crash could lose.
                for directory in Set(files.map { FileSystem.directoryName(stage + "/" + $0) } + [stage]).sorted().reversed() {
                    try tree.syncDirectory(directory)
                }
            }
            let lines = files.map { "write " + $0 + "\n" } + removals.map { "remove " + $0 + "\n" }
            try tree.writeAtomically(stage + "/" + StagedChanges.marker, Array(lines.joined().utf8))
        }
        committed = true
        // Moving is repeatable (see `apply`): an error that passes (one failed rename) costs a second try.
        do { try StagedChanges.apply(in: tree) } catch {
            do { try StagedChanges.apply(in: tree) } catch {
                throw Unfinished(reason: "\(error)")
            }
        }
    }

    /// Drops everything staged, so that the data directory is as it was; a committed stage is kept
    /// for the next command to finish.
    package func discard() {
        guard !committed else { return }
        try? tree.removeTree(stage)
    }

    /// Finishes a committed change, or drops an uncommitted one. Called when the data directory is opened.
    static func recover(in tree: FileTree) throws {
        let stage = DataDirectoryLayout(root: tree.root).staged
        guard tree.exists(stage) else { return }
        if tree.exists(stage + "/" + marker) {
            try storeOperation { try apply(in: tree) }
        } else {
            try storeOperation { try tree.removeTree(stage) }
        }
    }

    /// Moves committed files into place (a file already moved is skipped, so this can run again after a crash).
    /// The marker is the data directory's own file, but its names are checked all the same: each must stay inside it.
    private static func apply(in tree: FileTree) throws {
        let stage = DataDirectoryLayout(root: tree.root).staged
        guard let bytes = try tree.read(stage + "/" + marker, limit: 64 << 20) else { return }
        var directories = Set<String>()
        // Files are moved a directory at a time (10,000 tab files in one pair of directories).
        var writes: [String: [String]] = [:]
        var removals: [String] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let target = tree.root + "/" + parts[1]
            directories.insert(FileSystem.directoryName(target))
            if parts[0] == "write" {
                writes[FileSystem.directoryName(String(parts[1])), default: []].append(FileSystem.baseName(target))
            } else {
                removals.append(target)
            }
        }
        for (directory, names) in writes.sorted(by: { $0.key < $1.key }) {
            let relative = directory == "." || directory.isEmpty ? "" : "/" + directory
            // A directory of the stage holds staged files only: it takes the place of a missing or empty one whole.
            if !relative.isEmpty, try tree.moveDirectory(stage + relative, to: tree.root + relative) { continue }
            try tree.move(names, from: stage + relative, to: tree.root + relative)
        }
        for target in removals { try tree.remove(target) }
        for directory in directories.sorted() { try tree.syncDirectory(directory) }
        try tree.remove(stage + "/" + marker)
        try tree.removeTree(stage)
    }
}

/// A directory of the stage (see `StagedChanges.directory`); its files are durable only once the
/// stage is committed.
package struct StagedDirectory {
    fileprivate let directory: FileTree.OpenDirectory
    /// Records a file written, for the commit.
    fileprivate let record: (String) -> Void

    fileprivate init(_ directory: FileTree.OpenDirectory, record: @escaping (String) -> Void) {
        self.directory = directory
        self.record = record
    }

    /// A whole file that will replace the one of the same name.
    package func write(_ name: String, _ bytes: [UInt8]) throws {
        try storeOperation { try directory.write(name, bytes) }
        record(name)
    }
}

/// A staged file, written through a buffer; durable only once the stage is committed.
package final class StagedFile {
    let path: String
    private var fd: Int32
    /// Bytes written so far, buffered ones included.
    package private(set) var size = 0
    private var buffer: [UInt8] = []
    /// Bytes gathered before a write.
    private static let bufferSize = 1 << 20

    init(path: String, in tree: FileTree) throws {
        self.path = path
        guard let fd = try tree.openFile(path, flags: O_WRONLY | O_CREAT | O_TRUNC) else {
            throw FileSystemError(path: path, code: ENOENT, operation: "write")
        }
        self.fd = fd
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    package func append(_ bytes: [UInt8]) throws {
        try append(reserving: bytes.count) { $0 += bytes }
    }

    /// Appends what `write` appends to the buffer (about `reserving` bytes, so that a
    /// long line finds room without the buffer doubling); returns how many bytes it wrote.
    @discardableResult
    package func append(reserving: Int, _ write: (inout [UInt8]) -> Void) throws -> Int {
        if buffer.count + reserving > buffer.capacity {
            if !buffer.isEmpty { try flush() }
            buffer.reserveCapacity(max(reserving, StagedFile.bufferSize))
        }
        let before = buffer.count
        write(&buffer)
        let written = buffer.count - before
        size += written
        if buffer.count >= StagedFile.bufferSize { try flush() }
        return written
    }

    func flush() throws {
        try buffer.withUnsafeBytes { try FileSystem.writeAll(fd: fd, $0, path: path) }
        // A full buffer is written back now (SYNC_FILE_RANGE_WRITE: no wait), so that the commit's
        // fsync finds little left to write; only a hint, whatever it returns. Small files are left to the commit.
        if buffer.count >= StagedFile.bufferSize { _ = linuxSyncFileRange(fd, Int64(size - buffer.count), Int64(buffer.count), 2) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Replaces bytes already written (the same number of them).
    package func overwrite(_ bytes: [UInt8], at offset: Int) throws {
        try flush()
        try FileSystem.writeAll(fd: fd, bytes, at: offset, path: path)
    }

    /// The file's inode (it keeps it when moved into place).
    var inode: UInt64 {
        var info = stat()
        return fstat(fd, &info) == 0 ? UInt64(info.st_ino) : 0
    }

    package func close() throws {
        try flush()
        Glibc.close(fd)
        fd = -1
    }

    /// Appends the whole of the file at `source` (none if it does not exist), in the kernel where it can.
    package func copy(from source: String, in tree: FileTree) throws {
        try flush()
        guard let input = try tree.openFile(source, flags: O_RDONLY) else { return }
        defer { Glibc.close(input) }
        while true {
            let copied = linuxCopyFileRange(input, nil, fd, nil, 1 << 30, 0)
            if copied > 0 { size += copied; continue }
            if copied == 0 { return }
            if errno == EINTR { continue }
            guard errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL else { throw FileSystem.fail("write", path) }
            break
        }
        // A file system without copy_file_range: copy through memory, from where the kernel stopped.
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw FileSystem.fail("read", source)
            }
            if got == 0 { return }
            try chunk.withUnsafeBytes { try FileSystem.writeAll(fd: fd, UnsafeRawBufferPointer(rebasing: $0[..<got]), path: path) }
            size += got
        }
    }
}
