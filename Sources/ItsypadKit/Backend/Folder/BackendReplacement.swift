import ItsypadSupport

/// Replacing the whole backend with another one built next to it: a key rotation fills a new
/// zone beside the old one, then puts it in the old one's place, so that no device ever sees a
/// half-filled new zone or a mix of the two.
public struct BackendReplacement {
    /// The backend directory being replaced.
    public let path: String
    /// Longest wait for each writer's lock, in seconds.
    let lockTimeout: Double

    public init(path: String, lockTimeout: Double) {
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.lockTimeout = lockTimeout
    }

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
    /// `expected` (else `.zoneChanged`, and nothing moves), holding the locks of this backend's
    /// writers so that none is midway. This directory moves aside, the replacement moves in, and
    /// the old one is removed. Between the two renames there is no backend here: devices are told
    /// to retry later, and `finishInterruptedReplacement()` completes a replacement a crash stopped
    /// there. A writer that had not seen the replacement wrote into the old zone, which its next
    /// sync refuses; once it joins the new one it sends everything again.
    public func replace(expecting expected: ZoneInfo) throws {
        let parent = parentFiles
        guard try parent.status(replacementPath + "/zone.json")?.isRegular == true else {
            throw BackendError.corrupt(path: replacementPath, reason: "no complete backend to put in place")
        }
        try withEveryWriterLocked { current in
            guard current == expected else { throw BackendError.zoneChanged }
            try parent.removeTree(retiredPath)
            try parent.rename(path, to: retiredPath)
            try parent.rename(replacementPath, to: path)
            try parent.syncDirectory(FileIO.parentDirectory(of: path))
        }
        try parent.removeTree(retiredPath)
    }

    /// Runs `body` with the zone this directory holds, while no writer is midway: under the lock
    /// of every device that has one here (each device writes only under its own; a lock file is
    /// never created in another device's folder, which only that device writes).
    private func withEveryWriterLocked(_ body: (ZoneInfo) throws -> Void) throws {
        let layout = FolderLayout(root: path)
        let files = FileIO(root: path)
        func currentZone() throws -> ZoneInfo {
            guard try parentFiles.status(path)?.isDirectory == true,
                let bytes = try files.readFileIfExists(layout.zoneFile, limit: BackendLimits.maxSmallFileBytes)
            else { throw BackendError.zoneChanged }
            return try ZoneDocument.read(bytes, path: layout.zoneFile)
        }
        let zone = try currentZone()
        let locks = try layout.devices().filter { try files.status(layout.lockFile($0))?.isRegular == true }
            .map { try BackendLock.acquire(path: layout.lockFile($0), in: files.tree, timeout: lockTimeout) }
        try withExtendedLifetime(locks) {
            let now = try currentZone()
            guard now == zone else { throw BackendError.zoneChanged }
            try body(now)
        }
    }

    /// Moves a complete replacement into place when a crash stopped `replace` between its renames
    /// (no backend here, the replacement beside it). Returns whether it did.
    public func finishInterruptedReplacement() throws -> Bool {
        guard try parentFiles.status(path) == nil, try parentFiles.status(replacementPath + "/zone.json")?.isRegular == true else {
            return false
        }
        try parentFiles.rename(replacementPath, to: path)
        return true
    }

    /// Removes a replacement that was never put in place, and what a replaced backend left.
    public func removeReplacementLeftovers() throws {
        try parentFiles.removeTree(replacementPath)
        try parentFiles.removeTree(retiredPath)
    }
}
