import ItsypadSupport

extension DataStore {
    /// How often a sync sweeps: a temporary file goes only once it is a day old
    /// (`FileTree.abandonedTemporaryFileAge`), so a sweep more often finds next to nothing.
    static let temporaryFileSweepInterval = Milliseconds(FileTree.abandonedTemporaryFileAge) * 1000

    /// Removes the temporary files crashes left in the data directory (older than a day; see
    /// `FileTree.removeAbandonedTemporaryFiles`) when a day has passed since `lastSweep` (or it is
    /// unknown or in the future: a clock set back), and then sets it to `now`; returns how many. A
    /// crash's files thus go within two days of a sync. Each folder costs one read of its entries
    /// (`clips/blobs` holds a file per image), so a sync does it, and at most once a day.
    public func removeAbandonedTemporaryFiles(lastSweep: inout Milliseconds?, now: Milliseconds) throws -> Int {
        if let lastSweep, lastSweep <= now, now - lastSweep < Self.temporaryFileSweepInterval { return 0 }
        let removed = try storeOperation {
            try layout.foldersWithTemporaryFiles.reduce(0) { $0 + (try tree.removeAbandonedTemporaryFiles(in: $1)) }
        }
        lastSweep = now
        return removed
    }
}
