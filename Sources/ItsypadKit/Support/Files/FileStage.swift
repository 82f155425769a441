#if canImport(Glibc)
import Glibc
#endif

/// Files for one directory of a `FileTree`, written in parts, then made durable and put in place
/// together by `commit` (see `FileTree.writeAtomically(_:in:)`, which is one part and a commit), for
/// a writer that decides between parts whether to go on. The stage has one name a directory:
/// writers of the directory take turns (the data directory's lock, or for a sync's own stage,
/// written with that lock let go, the sync's lock), and what a crash or an error left of a stage
/// is dropped by the next one.
public final class FileStage {
    private let tree: FileTree
    private let directory: String
    private let path: String
    private let mode: mode_t
    private var names: [String] = []
    private var written: Set<String> = []
    /// Files written since the last syncfs without being synced one by one.
    private var unsynced = false
    /// Names made in the stage since the last syncfs (by files synced one by one).
    private var namesUnsynced = false

    public init(for directory: String, in tree: FileTree, mode: mode_t = 0o600) throws {
        self.tree = tree
        self.directory = directory
        self.mode = mode
        path = FileStage.path(for: directory, root: tree.root)
        try tree.removeTree(path)
    }

    /// Where the stage of `directory` is: beside it, unless it is the root of its tree (`root`):
    /// then inside it, and the files move one by one.
    public static func path(for directory: String, root: String) -> String {
        directory == root
            ? directory + "/" + FileSystem.temporaryPrefix + "batch"
            : FileSystem.directoryName(directory) + "/" + FileSystem.temporaryPrefix + FileSystem.baseName(directory)
    }

    deinit { try? tree.removeTree(path) }

    /// Writes `files` into the stage: a few are made durable one by one, more by one syncfs at `commit`.
    /// A name written again replaces its earlier bytes.
    public func write(_ files: [(name: String, bytes: [UInt8])]) throws {
        guard !files.isEmpty else { return }
        let syncEach = files.count <= FileTree.filesSyncedOneByOne
        try tree.writeFiles(files, in: path, mode: mode, syncingEach: syncEach)
        for file in files where written.insert(file.name).inserted { names.append(file.name) }
        if syncEach { namesUnsynced = true } else { unsynced = true }
    }

    /// Removes `dropped` from the stage: they are not put in place.
    public func drop(_ dropped: [String]) throws {
        let gone = Set(dropped).intersection(written)
        guard !gone.isEmpty else { return }
        for name in gone { try tree.remove(path + "/" + name) }
        names.removeAll { gone.contains($0) }
        written.subtract(gone)
        // Their removal made durable before the stage may take the directory's place.
        namesUnsynced = true
    }

    /// Makes the files written so far durable (one syncfs), so that `commit` has only to put them
    /// in place: a sync does this with the data directory's lock let go.
    public func makeDurable() throws {
        guard unsynced else { return }
        try tree.syncFileSystem(of: path)
        unsynced = false
        namesUnsynced = false
    }

    /// Makes the staged files durable, then puts them in place: a missing or empty directory is
    /// replaced by the stage in one rename, any other takes the files one rename each.
    public func commit() throws {
        guard !names.isEmpty else { return }
        try makeDurable()
        defer {
            names = []
            written = []
            namesUnsynced = false
        }
        if directory != tree.root {
            // Its names made durable before it takes the directory's place (a syncfs made them so already).
            if namesUnsynced { try tree.syncDirectory(path) }
            if try tree.moveDirectory(path, to: directory) { return }
        }
        try tree.move(names, from: path, to: directory)
        try tree.syncDirectory(directory)
    }
}
