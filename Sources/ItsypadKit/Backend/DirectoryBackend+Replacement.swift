/// Replacing the whole backend with another one built next to it: a key rotation fills a new
/// zone beside the old one, then puts it in the old one's place, so that no device ever sees a
/// half-filled new zone or a mix of the two.
extension DirectoryBackend {
    /// Where a replacement is built: a hidden sibling, so that moving it into place is a rename
    /// within one directory.
    public var replacementPath: String { sibling("replacement") }
    /// Where the replaced backend waits while the replacement moves in; removed right after.
    var retiredPath: String { sibling("retired") }

    private func sibling(_ role: String) -> String {
        FileIO.parentDirectory(of: path) + "/." + FileSystem.baseName(path) + ".itsypad-" + role
    }

    /// The parent directory's files: the backend and its siblings are names in it.
    private var parentFiles: FileIO { FileIO(root: FileIO.parentDirectory(of: path)) }

    /// Puts the backend at `replacementPath` in this one's place if this one's zone is still
    /// `expected` (else `.zoneChanged`, and nothing moves), holding this backend's lock so that
    /// no writer is midway. This directory moves aside, the replacement moves in, and the old one
    /// is removed. Between the two renames there is no backend here: devices are told to retry
    /// later, and `finishInterruptedReplacement()` completes a replacement a crash stopped there.
    public func replace(expecting expected: ZoneInfo) throws {
        let parent = parentFiles
        guard try parent.status(replacementPath + "/zone.json")?.isRegular == true else {
            throw BackendError.corrupt(path: replacementPath, reason: "no complete backend to put in place")
        }
        try withWriteLock {
            guard try readZone() == expected else { throw BackendError.zoneChanged }
            try parent.removeTree(retiredPath)
            try parent.rename(path, to: retiredPath)
            try parent.rename(replacementPath, to: path)
            try parent.syncDirectory(FileIO.parentDirectory(of: path))
        }
        try parent.removeTree(retiredPath)
    }

    /// Moves a complete replacement into place when a crash stopped `replace` between its renames
    /// (no backend here, the replacement beside it). Returns whether it did.
    public func finishInterruptedReplacement() throws -> Bool {
        guard try !backendDirectoryExists(), try parentFiles.status(replacementPath + "/zone.json")?.isRegular == true else { return false }
        try parentFiles.rename(replacementPath, to: path)
        return true
    }

    /// Removes a replacement that was never put in place, and what a replaced backend left.
    public func removeReplacementLeftovers() throws {
        try parentFiles.removeTree(replacementPath)
        try parentFiles.removeTree(retiredPath)
    }
}
