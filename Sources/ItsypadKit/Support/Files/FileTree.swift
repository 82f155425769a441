import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// syncfs(2): Glibc declares it only under _GNU_SOURCE, which the Swift module map does not set.
@_silgen_name("syncfs")
private func linuxSyncfs(_ fd: Int32) -> Int32

/// A directory tree that itsypad owns but others can write to: the data directory, a sync backend.
///
/// Everything below `root` is reached one component at a time from a descriptor of its parent
/// (`openat` with `O_NOFOLLOW`), so no symlink inside the tree is ever followed, whether it stands
/// for a file or for a directory on the way; only regular files are opened as files, and without
/// blocking (a FIFO planted in place of a file would otherwise hang the command while it holds its
/// lock). `root` itself is trusted as the user named it: it may be a symlink to another disk.
/// Paths are given whole (`root` + "/" + relative), as the stores build them and messages show them.
public struct FileTree: Sendable {
    public let root: String

    public init(root: String) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
    }

    /// The tree rooted at `path`'s directory: a file on its own, outside any store.
    public static func containing(_ path: String) -> FileTree { FileTree(root: FileSystem.directoryName(path)) }

    /// Longest name a file system stores (NAME_MAX).
    static let maxNameBytes = 255

    // MARK: Resolving

    /// The components of `path` below the root, each a plain name; throws for anything else.
    func components(of path: String) throws -> [String] {
        let prefix = root == "/" ? "/" : root + "/"
        guard path.hasPrefix(prefix) else {
            throw FileSystemError(path: path, code: FileSystemError.unsafeName, operation: "open", detail: "outside \(root)")
        }
        let names = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for name in names where !FileTree.isPlainName(name) {
            throw FileSystemError(path: path, code: FileSystemError.unsafeName, operation: "open")
        }
        return names
    }

    /// A name that stays in its directory: not empty, ".", "..", no "/" or NUL, at most 255 bytes.
    public static func isPlainName(_ name: String) -> Bool {
        var name = name
        // Over the contiguous bytes: far cheaper than a search of the String's UTF8View.
        return name.withUTF8 { bytes in
            (1...maxNameBytes).contains(bytes.count) && !(bytes.count <= 2 && bytes.allSatisfy { $0 == UInt8(ascii: ".") })
                && !bytes.contains(0) && !bytes.contains(UInt8(ascii: "/"))
        }
    }

    private func path(of names: ArraySlice<String>) -> String {
        names.isEmpty ? root : (root == "/" ? "" : root) + "/" + names.joined(separator: "/")
    }

    /// Opens the directory `names` below the root without following symlinks; with `creating`,
    /// missing directories are made (mode 0700). Returns nil when one is missing and not created.
    private func openDirectory(_ names: ArraySlice<String>, creating: Bool) throws -> Int32? {
        var fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 && errno == ENOENT && creating {
            // The root is where the user said the tree lives; it is made as named.
            try FileSystem.makeDirectory(root)
            fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw FileSystem.fail("open", root)
        }
        // By index, not `zip`: a `Zip2Sequence` iterator's type is instantiated at run time by a
        // conformance search, which every command would pay at start-up.
        for index in names.indices {
            let name = names[index]
            var next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0 && errno == ENOENT && creating {
                if mkdirat(fd, name, 0o700) != 0 && errno != EEXIST {
                    let failure = FileSystem.fail("create directory", path(of: names[...index]))
                    close(fd)
                    throw failure
                }
                next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            let code = errno
            close(fd)
            if next < 0 {
                if code == ENOENT && !creating { return nil }
                // A symlink gives ELOOP, a file where a directory belongs ENOTDIR.
                throw FileSystemError(
                    path: path(of: names[...index]), code: code == ENOTDIR ? FileSystemError.notRegularFile : code,
                    operation: "open", detail: code == ENOTDIR ? "a directory was expected" : nil)
            }
            fd = next
        }
        return fd
    }

    /// Runs `body` with a descriptor of `path`'s directory and its last component.
    /// `body` gets nil for the descriptor when the directory does not exist (and is not created).
    private func inParent<T>(of path: String, creating: Bool = false, _ body: (Int32?, String) throws -> T) throws -> T {
        let names = try components(of: path)
        guard let name = names.last else { throw FileSystemError(path: path, code: FileSystemError.unsafeName, operation: "open") }
        let directory = try openDirectory(names.dropLast(), creating: creating)
        defer { if let directory { close(directory) } }
        return try body(directory, name)
    }

    /// Runs `body` with a descriptor of the directory `path` (nil when it does not exist and is not created).
    private func inDirectory<T>(_ path: String, creating: Bool = false, _ body: (Int32?) throws -> T) throws -> T {
        let directory = try openDirectory(path == root ? [] : try components(of: path)[...], creating: creating)
        defer { if let directory { close(directory) } }
        return try body(directory)
    }

    /// Opens a regular file in `directory`: never a symlink, never blocking on a FIFO or device.
    /// Returns nil when it does not exist (and `flags` has no O_CREAT).
    /// Opens the regular file `name` of `directory`: its descriptor and its size when opened.
    private static func openRegular(
        _ directory: Int32, _ name: String, flags: Int32, mode: mode_t, path: @autoclosure () -> String
    ) throws -> (
        fd: Int32, size: Int
    )? {
        let fd = openat(directory, name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode)
        if fd < 0 {
            if errno == ENOENT { return nil }
            // A FIFO without a reader refuses a non-blocking writer with ENXIO.
            if errno == ENXIO { throw FileSystemError(path: path(), code: FileSystemError.notRegularFile, operation: "open") }
            throw FileSystem.fail("open", path())
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let failure = FileSystem.fail("open", path())
            close(fd)
            throw failure
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw FileSystemError(
                path: path(), code: FileSystemError.notRegularFile, operation: "open",
                detail: info.st_mode & S_IFMT == S_IFDIR ? "a directory" : "a FIFO, socket or device")
        }
        // O_NONBLOCK has no effect on a regular file, so the descriptor is used as it is.
        return (fd, Int(info.st_size))
    }

    // MARK: Files

    /// Opens the regular file at `path` with `flags` (O_CREAT creates it, and its missing directories).
    /// Returns nil when it does not exist and is not created. The caller closes the descriptor.
    public func openFile(_ path: String, flags: Int32, mode: mode_t = 0o600) throws -> Int32? {
        try inParent(of: path, creating: flags & O_CREAT != 0) { directory, name in
            guard let directory else { return nil }
            return try FileTree.openRegular(directory, name, flags: flags, mode: mode, path: path)?.fd
        }
    }

    /// `lstat` of `path`, or nil if it (or a directory on the way) does not exist.
    public func status(_ path: String) throws -> FileStatus? {
        if path == root {
            var info = stat()
            guard stat(root, &info) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { return nil }
                throw FileSystem.fail("stat", root)
            }
            return FileStatus(info)
        }
        return try inParent(of: path) { directory, name in
            guard let directory else { return nil }
            var info = stat()
            guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno == ENOENT { return nil }
                throw FileSystem.fail("stat", path)
            }
            return FileStatus(info)
        }
    }

    /// Whether anything (a symlink included) exists at `path`.
    public func exists(_ path: String) -> Bool { ((try? status(path)) ?? nil) != nil }

    /// Size of the regular file at `path`, nil when missing or not a regular file.
    public func fileSize(_ path: String) -> Int? {
        guard let status = (try? status(path)) ?? nil, status.isRegular else { return nil }
        return status.size
    }

    /// Reads a regular file from `offset` to its end; nil when it does not exist. With `limit`, a file
    /// larger than that is refused before anything is read (a record, an asset, a journal segment).
    public func read(_ path: String, from offset: Int = 0, limit: Int? = nil) throws -> [UInt8]? {
        try inParent(of: path, creating: false) { directory, name in
            guard let directory, let file = try FileTree.openRegular(directory, name, flags: O_RDONLY, mode: 0, path: path) else {
                return nil
            }
            defer { close(file.fd) }
            return try FileTree.read(file, path: path, from: offset, limit: limit)
        }
    }

    /// Reads many regular files of `directory`, which is opened once (a file each is then one
    /// `openat`, not a walk from the root). `body` gets each name in order with the file's bytes, nil
    /// when it does not exist (or the directory does not), or the error `read(_:limit:)` would throw.
    public func readFiles(
        _ names: [String], in directory: String, limit: Int? = nil, _ body: (String, Result<[UInt8]?, any Error>) throws -> Void
    ) throws {
        let opened = try self.directory(directory)
        for name in names {
            let result = Result<[UInt8]?, any Error> {
                var bytes: [UInt8] = []
                return try opened.read(name, into: &bytes, limit: limit) ? bytes : nil
            }
            try body(name, result)
        }
    }

    /// The directory `path`, opened once so that each of its files is then read or written with one
    /// `openat`, not a walk from the root (a first sync reads 10,000 files, an export every image's,
    /// an import writes them). With `creating`, it is made if missing; else a missing one holds no files.
    public func directory(_ path: String, creating: Bool = false) throws -> OpenDirectory {
        OpenDirectory(fd: try openDirectory(path == root ? [] : try components(of: path)[...], creating: creating), path: path)
    }

    /// A directory of the tree, open for its regular files (see `directory(_:creating:)`); closed when the
    /// last reference goes.
    public final class OpenDirectory: Sendable {
        private let fd: Int32?
        public let path: String

        fileprivate init(fd: Int32?, path: String) {
            self.fd = fd
            self.path = path
        }

        deinit { if let fd { close(fd) } }

        /// Reads the regular file `name` whole into `buffer`, replacing what it held (its capacity
        /// is reused); false when there is no such file. A file larger than `limit` is refused
        /// before anything is read.
        public func read(_ name: String, into buffer: inout [UInt8], limit: Int? = nil) throws -> Bool {
            // The path is made only for a message.
            let path = { self.path + "/" + name }
            guard FileTree.isPlainName(name) else {
                throw FileSystemError(path: path(), code: FileSystemError.unsafeName, operation: "open")
            }
            guard let fd, let file = try FileTree.openRegular(fd, name, flags: O_RDONLY, mode: 0, path: path()) else { return false }
            defer { close(file.fd) }
            try FileTree.check(file.size, limit: limit, path: path())
            buffer.removeAll(keepingCapacity: true)
            buffer.append(contentsOf: repeatElement(0, count: file.size))
            let count = try buffer.withUnsafeMutableBytes { try FileSystem.read(fd: file.fd, offset: 0, into: $0, path: path()) }
            buffer.removeLast(buffer.count - count)
            return true
        }

        /// The names of its entries, temporary files included when `includingHidden`; nil when it does not exist.
        public func names(includingHidden: Bool) throws -> [String]? {
            guard let fd else { return nil }
            return try FileTree.withListing(of: fd, path: path) { FileSystem.names(in: $0, includingHidden: includingHidden) }
        }

        /// Writes the file `name` (replacing any), not made durable: the caller syncs it.
        public func write(_ name: String, _ bytes: [UInt8], mode: mode_t = 0o600) throws {
            guard FileTree.isPlainName(name) else {
                throw FileSystemError(path: path + "/" + name, code: FileSystemError.unsafeName, operation: "write")
            }
            guard let fd else { throw FileSystemError(path: path, code: ENOENT, operation: "write") }
            try FileTree.write(name, bytes, in: fd, mode: mode, syncing: false, path: path + "/" + name)
        }

        /// The directory `name` here (made if missing when `creating`: a `mkdirat` that may find it
        /// there, then one `openat`, never a walk from the root); a missing one holds no files.
        fileprivate func subdirectory(_ name: String, creating: Bool) throws -> OpenDirectory {
            let child = path + "/" + name
            guard FileTree.isPlainName(name) else {
                throw FileSystemError(path: child, code: FileSystemError.unsafeName, operation: "open")
            }
            guard let fd else {
                if creating { throw FileSystemError(path: path, code: ENOENT, operation: "open") }
                return OpenDirectory(fd: nil, path: child)
            }
            if creating, mkdirat(fd, name, 0o700) != 0, errno != EEXIST { throw FileSystem.fail("create directory", child) }
            let opened = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if opened < 0 {
                let code = errno
                if code == ENOENT && !creating { return OpenDirectory(fd: nil, path: child) }
                // A symlink gives ELOOP, a file where a directory belongs ENOTDIR.
                throw FileSystemError(
                    path: child, code: code == ENOTDIR ? FileSystemError.notRegularFile : code, operation: "open",
                    detail: code == ENOTDIR ? "a directory was expected" : nil)
            }
            return OpenDirectory(fd: opened, path: child)
        }

        /// Creates the file `name` here with `bytes`, made durable when `syncing`; nil, writing
        /// nothing, when something (a file, a link, a folder) already has that name. With
        /// `checkingMode` the file gets exactly `mode` whatever the umask, and the result says
        /// whether the umask had changed it (if not, a caller creating many needs no more checks).
        /// A failure removes what it created.
        fileprivate func create(_ name: String, _ bytes: [UInt8], mode: mode_t, checkingMode: Bool, syncing: Bool) throws -> Bool? {
            guard let fd else { throw FileSystemError(path: path, code: ENOENT, operation: "write") }
            let file = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if file < 0 {
                if errno == EEXIST { return nil }
                throw FileSystem.fail("write", path + "/" + name)
            }
            defer { close(file) }
            do {
                let changed = checkingMode ? try FileTree.setMode(of: file, to: mode, path: path + "/" + name) : false
                try bytes.withUnsafeBytes { try FileSystem.writeAll(fd: file, $0, path: path + "/" + name) }
                if syncing, fsync(file) != 0 { throw FileSystem.fail("sync", path + "/" + name) }
                return changed
            } catch {
                unlinkat(fd, name, 0)
                throw error
            }
        }

        /// Renames `source` to `target` here, replacing whatever is there (a symlink included, never followed).
        fileprivate func rename(_ source: String, to target: String) throws {
            guard let fd, renameat(fd, source, fd, target) == 0 else { throw FileSystem.fail("rename", path + "/" + target) }
        }

        fileprivate func remove(_ name: String) {
            if let fd { unlinkat(fd, name, 0) }
        }

        /// Makes the renames made here durable.
        fileprivate func sync() throws {
            if let fd { try FileSystem.sync(directory: fd, path: path) }
        }
    }

    /// Directories of the tree opened once each for a piece of work (a batch of a backend's record
    /// files read and written): each is opened from its parent, itself opened once, never walked to
    /// from the root again. With `creating`, missing ones are made; else a missing one holds no files.
    public final class OpenDirectories: Sendable {
        public let tree: FileTree
        private let creating: Bool
        private let opened = Mutex<[String: OpenDirectory]>([:])

        fileprivate init(tree: FileTree, creating: Bool) {
            self.tree = tree
            self.creating = creating
        }

        /// The directory `path` (the root or below it).
        public func directory(_ path: String) throws -> OpenDirectory {
            if let directory = opened.withLock({ $0[path] }) { return directory }
            let directory: OpenDirectory
            if path == tree.root {
                directory = try tree.directory(path, creating: creating)
            } else {
                // Every name on the way checked (nothing outside the root, no "..", no empty name).
                let names = try tree.components(of: path)
                let parent = names.count == 1 ? tree.root : FileSystem.directoryName(path)
                directory = try self.directory(parent).subdirectory(names.last!, creating: creating)
            }
            opened.withLock { $0[path] = directory }
            return directory
        }
    }

    /// Directories opened once each for a piece of work (see `OpenDirectories`).
    public func directories(creating: Bool) -> OpenDirectories { OpenDirectories(tree: self, creating: creating) }

    /// Replaces many files, each atomically, made durable together rather than one by one, their
    /// directories taken from `directories` (which makes missing ones). A file with no entry of its name yet
    /// is created in place; any other is written to a temporary name in its directory. Then all are
    /// made durable (one `syncfs` for many, else an `fsync` each), the temporary files renamed into
    /// place, and the new names made durable (one more `syncfs`, else an `fsync` of each directory).
    /// Once it returns every file is durable. A crash leaves each replaced file old or new, perhaps
    /// temporary files (which readers skip and sweeps remove), and a created one missing or partial:
    /// a caller that creates in place must treat a partial file as none, and write it again (it is
    /// then replaced, not created).
    public func replaceFiles(
        _ files: [(path: String, bytes: [UInt8])], in directories: OpenDirectories, mode: mode_t = 0o600
    ) throws {
        guard !files.isEmpty else { return }
        var written: [(directory: OpenDirectory, temporary: String, name: String)] = []
        var touched: [String: OpenDirectory] = [:]
        var renamed = 0
        let syncEach = files.count <= Self.filesSyncedOneByOne
        var checkingMode = true
        // One random name for the batch, numbered for each file: the names are drawn once, not once a file.
        let temporary = FileSystem.temporaryName()
        do {
            for (index, file) in files.enumerated() {
                let name = FileSystem.baseName(file.path)
                guard FileTree.isPlainName(name) else {
                    throw FileSystemError(path: file.path, code: FileSystemError.unsafeName, operation: "write")
                }
                let directory = try directories.directory(FileSystem.directoryName(file.path))
                touched[directory.path] = directory
                if let modeChanged = try directory.create(name, file.bytes, mode: mode, checkingMode: checkingMode, syncing: syncEach) {
                    checkingMode = modeChanged
                    continue
                }
                // Something is there: replaced by a temporary file's rename, never written through.
                let staged = temporary + "-\(index)"
                guard let modeChanged = try directory.create(staged, file.bytes, mode: mode, checkingMode: checkingMode, syncing: syncEach)
                else { throw FileSystemError(path: directory.path + "/" + staged, code: EEXIST, operation: "write") }
                checkingMode = modeChanged
                written.append((directory, staged, name))
            }
            if !syncEach && !written.isEmpty { try syncFileSystem(of: root) }
            for file in written {
                try file.directory.rename(file.temporary, to: file.name)
                renamed += 1
            }
        } catch {
            for file in written[renamed...] { file.directory.remove(file.temporary) }
            throw error
        }
        if syncEach {
            for directory in touched.values { try directory.sync() }
        } else {
            try syncFileSystem(of: root)
        }
    }

    /// Writes the file `name` of the directory `fd` (replacing any), made durable when `syncing`.
    private static func write(
        _ name: String, _ bytes: [UInt8], in fd: Int32, mode: mode_t, syncing: Bool, path: @autoclosure () -> String
    ) throws {
        let fileFD = openat(fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode)
        if fileFD < 0 { throw FileSystem.fail("write", path()) }
        defer { close(fileFD) }
        try bytes.withUnsafeBytes { try FileSystem.writeAll(fd: fileFD, $0, path: path()) }
        if syncing, fsync(fileFD) != 0 { throw FileSystem.fail("sync", path()) }
    }

    /// Gives a file just created exactly `mode`, whatever the umask: set on the open file (nothing at
    /// the path is followed), and only when the umask changed it, as a change of mode is one more
    /// write to the file system's journal (a first sync creates thousands of files).
    /// Returns whether it changed the mode.
    @discardableResult
    private static func setMode(of fd: Int32, to mode: mode_t, path: @autoclosure () -> String) throws -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read the mode of", path()) }
        guard info.st_mode & 0o7777 != mode else { return false }
        if fchmod(fd, mode) != 0 { throw FileSystem.fail("set the mode of", path()) }
        return true
    }

    /// Refuses a file of `size` bytes larger than `limit`.
    private static func check(_ size: Int, limit: Int?, path: @autoclosure () -> String) throws {
        guard let limit, size > limit else { return }
        throw FileSystemError(
            path: path(), code: FileSystemError.tooLarge, operation: "read", detail: "\(size) bytes; the limit is \(limit)")
    }

    /// The bytes of an open regular file from `offset` to its end, refused when larger than `limit`.
    private static func read(
        _ file: (fd: Int32, size: Int), path: @autoclosure () -> String, from offset: Int, limit: Int?
    ) throws -> [UInt8] {
        let (fd, size) = file
        try check(size, limit: limit, path: path())
        return size > offset ? try FileSystem.read(fd: fd, offset: offset, count: size - offset, path: path()) : []
    }

    /// Streams the complete lines of a regular file (see `FileSystem.forEachLine`); a missing file has none.
    public func forEachLine(_ path: String, _ body: (Int, ArraySlice<UInt8>) throws -> Void) throws {
        guard let fd = try openFile(path, flags: O_RDONLY) else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read", path) }
        try FileSystem.forEachLine(fd: fd, size: Int(info.st_size), path: path, body)
    }

    /// Replaces `path` with `bytes` atomically (see `FileSystem.writeAtomically`), with exactly `mode`.
    /// `isChange`: the replacement is the change a command makes, so that a failure to make it durable
    /// once it is made is marked `changeMade`.
    public func writeAtomically(
        _ path: String, _ bytes: [UInt8], mode: mode_t = 0o600, syncingDirectory: Bool = true, isChange: Bool = false
    ) throws {
        try writeAtomically(path, mode: mode, syncingDirectory: syncingDirectory, isChange: isChange) { write in try write(bytes) }
    }

    /// Like `writeAtomically(_:_:)`, with the content produced in pieces.
    public func writeAtomically(
        _ path: String, mode: mode_t = 0o600, syncingDirectory: Bool = true, isChange: Bool = false,
        _ produce: ((_ bytes: [UInt8]) throws -> Void) throws -> Void
    ) throws {
        try inParent(of: path, creating: true) { directory, name in
            guard let directory else { throw FileSystemError(path: path, code: ENOENT, operation: "write") }
            let temp = FileSystem.temporaryName()
            let tempPath = FileSystem.directoryName(path) + "/" + temp
            let fd = openat(directory, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd < 0 { throw FileSystem.fail("write", tempPath) }
            do {
                try FileTree.setMode(of: fd, to: mode, path: tempPath)
                try produce { bytes in try bytes.withUnsafeBytes { try FileSystem.writeAll(fd: fd, $0, path: tempPath) } }
                if fsync(fd) != 0 { throw FileSystem.fail("sync", tempPath) }
                close(fd)
            } catch {
                close(fd)
                unlinkat(directory, temp, 0)
                throw error
            }
            // rename replaces whatever is there (a symlink included) without following it.
            if renameat(directory, temp, directory, name) != 0 {
                let failure = FileSystem.fail("rename", path)
                unlinkat(directory, temp, 0)
                throw failure
            }
            if syncingDirectory {
                try FileSystemError.afterChange(if: isChange) {
                    try FileSystem.sync(directory: directory, path: FileSystem.directoryName(path))
                }
            }
        }
    }

    /// Up to this many files, a batch write syncs each file: `syncfs` also waits for every other
    /// process's unwritten data on the file system, which costs more than a few `fsync` calls.
    public static let filesSyncedOneByOne = 64

    /// Replaces many files in `directory` at once (see `FileSystem.writeAtomically(_:in:)`): every file
    /// is written to a stage beside `directory` and made durable (one `syncfs` for a large batch);
    /// then a missing or empty `directory` is replaced by the stage in one rename, and any other
    /// takes the files one rename each (see `FileStage`).
    public func writeAtomically(_ files: [(name: String, bytes: [UInt8])], in directory: String, mode: mode_t = 0o600) throws {
        guard !files.isEmpty else { return }
        for file in files where !FileTree.isPlainName(file.name) {
            throw FileSystemError(path: directory + "/" + file.name, code: FileSystemError.unsafeName, operation: "write")
        }
        let stage = try FileStage(for: directory, in: self, mode: mode)
        try stage.write(files)
        try stage.commit()
    }

    /// Writes `files` into `directory` (made if missing), replacing any of the same name: from
    /// every processor when there are thousands (creating them is most of the time), each made
    /// durable at once when `syncingEach` (else the caller syncs them together). A name given
    /// twice may end with either content.
    public func writeFiles(
        _ files: [(name: String, bytes: [UInt8])], in directory: String, mode: mode_t = 0o600, syncingEach: Bool = false
    ) throws {
        for file in files where !FileTree.isPlainName(file.name) {
            throw FileSystemError(path: directory + "/" + file.name, code: FileSystemError.unsafeName, operation: "write")
        }
        try inDirectory(directory, creating: true) { fd in
            guard let fd else { throw FileSystemError(path: directory, code: ENOENT, operation: "write") }
            let chunk = 512
            _ = try Parallel.map(parts: (files.count + chunk - 1) / chunk) { part in
                for file in files[(part * chunk)..<min(files.count, (part + 1) * chunk)] {
                    try FileTree.write(file.name, file.bytes, in: fd, mode: mode, syncing: syncingEach, path: directory + "/" + file.name)
                }
            }
        }
    }

    /// Removes the file (or symlink) at `path`; returns false when there was none. A directory is refused.
    @discardableResult
    public func remove(_ path: String) throws -> Bool {
        try inParent(of: path) { directory, name in
            guard let directory else { return false }
            if unlinkat(directory, name, 0) == 0 { return true }
            if errno == ENOENT { return false }
            throw FileSystem.fail("remove", path)
        }
    }

    /// Removes the empty directory at `path` (never a link's target); returns false when there was none.
    @discardableResult
    public func removeDirectory(_ path: String) throws -> Bool {
        try inParent(of: path) { directory, name in
            guard let directory else { return false }
            if unlinkat(directory, name, AT_REMOVEDIR) == 0 { return true }
            if errno == ENOENT { return false }
            throw FileSystem.fail("remove directory", path)
        }
    }

    /// Makes `target` a second name of the file `source` (a symlink at `source` is linked as itself,
    /// never followed): atomic and exclusive. Returns false when `target` already exists; throws when
    /// the file system cannot link (EXDEV, EPERM on file systems without hard links).
    public func link(_ source: String, to target: String) throws -> Bool {
        try inParent(of: source) { sourceDirectory, sourceName in
            guard let sourceDirectory else { throw FileSystemError(path: source, code: ENOENT, operation: "link") }
            return try inParent(of: target, creating: true) { targetDirectory, targetName in
                guard let targetDirectory else { throw FileSystemError(path: target, code: ENOENT, operation: "link") }
                if linkat(sourceDirectory, sourceName, targetDirectory, targetName, 0) == 0 { return true }
                if errno == EEXIST { return false }
                throw FileSystem.fail("link", target)
            }
        }
    }

    /// Sets the modification time of the file at `path` to now (the file itself, never a link's target).
    public func touch(_ path: String) throws {
        try inParent(of: path) { directory, name in
            guard let directory, utimensat(directory, name, nil, AT_SYMLINK_NOFOLLOW) == 0 else { throw FileSystem.fail("touch", path) }
        }
    }

    // MARK: Directories

    /// Creates the directory `path` and missing ones on the way below the root (mode 0700).
    /// Returns false when it already existed.
    @discardableResult
    public func makeDirectory(_ path: String) throws -> Bool {
        let existed = try status(path)?.isDirectory == true
        if !existed { try inDirectory(path, creating: true) { _ in } }
        return !existed
    }

    /// Names in the directory `path`, sorted; hidden names (temp files) only when asked for.
    /// nil when the directory does not exist.
    public func list(_ path: String, includingHidden: Bool = false) throws -> [String]? {
        try inDirectory(path) { fd in
            guard let fd else { return nil }
            return try Self.withListing(of: fd, path: path) { FileSystem.names(in: $0, includingHidden: includingHidden) }
        }
    }

    /// Runs `body` with a listing of the open directory `fd` (read from a copy of it: `fd` stays open).
    fileprivate static func withListing<T>(of fd: Int32, path: String, _ body: (OpaquePointer) throws -> T) throws -> T {
        let copy = dup(fd)
        guard copy >= 0, let listing = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            throw FileSystem.fail("list", path)
        }
        defer { closedir(listing) }
        return try body(listing)
    }

    /// How old an abandoned temporary file is before it is removed: a write takes seconds, so one
    /// this old was left by a crash, even one another device of a shared folder began.
    public static let abandonedTemporaryFileAge: Int = 86_400

    /// Removes the temporary files (`FileSystem.temporaryPrefix`) in the directory `path` last
    /// modified more than `FileTree.abandonedTemporaryFileAge` seconds ago; returns how many. Only
    /// regular files go (a link or a folder of that name stays, never followed); names are compared
    /// as the directory lists them, so a large folder costs one read of its entries. A missing
    /// directory, or one that is not a directory, has none.
    public func removeAbandonedTemporaryFiles(in path: String) throws -> Int {
        let cutoff = time(nil) - Self.abandonedTemporaryFileAge
        let prefix = Array(FileSystem.temporaryPrefix.utf8CString.dropLast())
        do {
            return try inDirectory(path) { directory in
                guard let directory else { return 0 }
                return try Self.withListing(of: directory, path: path) { listing in
                    var removed = 0
                    while let entry = readdir(listing) {
                        let name = withUnsafePointer(to: entry.pointee.d_name) {
                            $0.withMemoryRebound(to: CChar.self, capacity: 256) {
                                strncmp($0, prefix, prefix.count) == 0 ? String(cString: $0) : nil
                            }
                        }
                        var info = stat()
                        guard let name, fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG,
                            info.st_mtim.tv_sec < cutoff
                        else { continue }
                        if unlinkat(directory, name, 0) == 0 {
                            removed += 1
                        } else if errno != ENOENT {
                            throw FileSystem.fail("remove", path + "/" + name)
                        }
                    }
                    return removed
                }
            }
        } catch let failure as FileSystemError where failure.isMalformed {
            return 0
        }
    }

    /// Makes renames and unlinks in the directory `path` durable (see `FileSystem.syncDirectory`).
    public func syncDirectory(_ path: String) throws {
        try inDirectory(path) { fd in
            guard let fd else { throw FileSystemError(path: path, code: ENOENT, operation: "sync") }
            try FileSystem.sync(directory: fd, path: path)
        }
    }

    /// Makes the data of the regular file at `path` durable.
    public func syncFile(_ path: String) throws {
        guard let fd = try openFile(path, flags: O_RDONLY) else { throw FileSystemError(path: path, code: ENOENT, operation: "sync") }
        defer { close(fd) }
        if fsync(fd) != 0 { throw FileSystem.fail("sync", path) }
    }

    /// Makes everything written on the file system holding the directory `path` durable (one syncfs for many files).
    public func syncFileSystem(of path: String) throws {
        try inDirectory(path) { fd in
            guard let fd else { throw FileSystemError(path: path, code: ENOENT, operation: "sync") }
            if linuxSyncfs(fd) != 0 { throw FileSystem.fail("sync", path) }
        }
    }

    /// Moves the file at `source` to `target` (replacing what is there), both inside the tree;
    /// missing directories on the way to `target` are made. Neither is followed if a symlink.
    public func rename(_ source: String, to target: String) throws {
        try inParent(of: source) { sourceDirectory, sourceName in
            guard let sourceDirectory else { throw FileSystemError(path: source, code: ENOENT, operation: "rename") }
            try inParent(of: target, creating: true) { targetDirectory, targetName in
                guard let targetDirectory, renameat(sourceDirectory, sourceName, targetDirectory, targetName) == 0 else {
                    throw FileSystem.fail("rename", target)
                }
            }
        }
    }

    /// Moves the entries `names` of the directory `source` to the directory `target` (made if missing),
    /// each replacing what is there, with both directories opened once (an import moves 10,000 tab
    /// files). A name that is not in `source` is skipped; none is followed if a symlink.
    public func move(_ names: [String], from source: String, to target: String) throws {
        for name in names where !FileTree.isPlainName(name) {
            throw FileSystemError(path: source + "/" + name, code: FileSystemError.unsafeName, operation: "rename")
        }
        try inDirectory(source) { sourceDirectory in
            guard let sourceDirectory else { return }
            try inDirectory(target, creating: true) { targetDirectory in
                guard let targetDirectory else { throw FileSystemError(path: target, code: ENOENT, operation: "rename") }
                for name in names where renameat(sourceDirectory, name, targetDirectory, name) != 0 && errno != ENOENT {
                    throw FileSystem.fail("rename", target + "/" + name)
                }
            }
        }
    }

    /// Renames the directory `source` to `target` if `target` is missing or an empty directory (the
    /// kernel refuses to replace any other), durably; false, changing nothing, otherwise. Filling an
    /// empty directory this way takes one rename, not one a file (10,000 when a first sync or an
    /// import fills tabs/, which take as long as writing the files). The caller has made `source`'s
    /// entries durable (`syncDirectory`, or the stage's syncfs): a crash never shows a part of them in place.
    public func moveDirectory(_ source: String, to target: String) throws -> Bool {
        try inParent(of: source) { sourceParent, sourceName in
            guard let sourceParent else { return false }
            return try inParent(of: target, creating: true) { targetParent, targetName in
                guard let targetParent else { return false }
                guard renameat(sourceParent, sourceName, targetParent, targetName) == 0 else { return false }
                try FileSystem.sync(directory: targetParent, path: FileSystem.directoryName(target))
                if FileSystem.directoryName(source) != FileSystem.directoryName(target) {
                    try FileSystem.sync(directory: sourceParent, path: FileSystem.directoryName(source))
                }
                return true
            }
        }
    }

    /// Removes the directory `path` and everything in it, never following a symlink (a link is removed as itself).
    public func removeTree(_ path: String) throws {
        try inParent(of: path) { directory, name in
            guard let directory else { return }
            try FileTree.removeTree(name, in: directory, path: path)
        }
    }

    private static func removeTree(_ name: String, in directory: Int32, path: String) throws {
        if unlinkat(directory, name, 0) == 0 || errno == ENOENT { return }
        guard errno == EISDIR || errno == EPERM else { throw FileSystem.fail("remove", path) }
        let fd = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 { throw FileSystem.fail("remove", path) }
        let copy = dup(fd)
        guard copy >= 0, let dir = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            close(fd)
            throw FileSystem.fail("list", path)
        }
        let names = FileSystem.names(in: dir, includingHidden: true)
        closedir(dir)
        defer { close(fd) }
        for child in names { try removeTree(child, in: fd, path: path + "/" + child) }
        if unlinkat(directory, name, AT_REMOVEDIR) != 0 && errno != ENOENT { throw FileSystem.fail("remove", path) }
    }
}

extension FileTree {
    /// The root and every directory and regular file below it that another user could change
    /// (`FileStatus.othersCanChange`), never following a symlink; a directory named in `skipping`
    /// (relative to the root) is not entered.
    public func entriesOthersCanChange(skipping: Set<String> = []) throws -> [(path: String, status: FileStatus)] {
        guard let rootStatus = try status(root) else { return [] }
        var found: [(path: String, status: FileStatus)] = rootStatus.othersCanChange ? [(root, rootStatus)] : []
        try forEachEntry(entering: { !skipping.contains($0) }) { relative, status in
            if (status.isDirectory || status.isRegular) && status.othersCanChange { found.append((root + "/" + relative, status)) }
        }
        return found
    }

    /// Calls `body` with every entry below the root (its path relative to the root, and its
    /// status), never following a symlink; a directory is entered when `entering` takes its
    /// relative path. One `fstatat` an entry, from its directory's descriptor.
    public func forEachEntry(entering: (String) -> Bool, _ body: (String, FileStatus) throws -> Void) throws {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystem.fail("open", root) }
        try FileTree.forEachEntry(in: fd, relative: "", root: root, entering: entering, body)
    }

    /// Closes `fd`.
    private static func forEachEntry(
        in fd: Int32, relative: String, root: String, entering: (String) -> Bool, _ body: (String, FileStatus) throws -> Void
    ) throws {
        let directory = relative.isEmpty ? root : root + "/" + relative
        guard let dir = fdopendir(fd) else {
            close(fd)
            throw FileSystem.fail("list", directory)
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            guard name != ".", name != ".." else { continue }
            var info = stat()
            guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno == ENOENT { continue }
                throw FileSystem.fail("stat", directory + "/" + name)
            }
            let status = FileStatus(info)
            let childRelative = relative.isEmpty ? name : relative + "/" + name
            try body(childRelative, status)
            guard status.isDirectory, entering(childRelative) else { continue }
            let child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard child >= 0 else { throw FileSystem.fail("open", directory + "/" + name) }
            try forEachEntry(in: child, relative: childRelative, root: root, entering: entering, body)
        }
    }
}
