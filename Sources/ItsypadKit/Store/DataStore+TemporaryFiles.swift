import ItsypadSupport

extension DataStore {
    /// Removes the temporary files crashes left in the data directory (older than a day; see
    /// `FileTree.removeAbandonedTemporaryFiles`); returns how many. Each folder costs one read of
    /// its entries, so a sync does it, not every command.
    public func removeAbandonedTemporaryFiles() throws -> Int {
        try storeOperation {
            try layout.foldersWithTemporaryFiles.reduce(0) { $0 + (try tree.removeAbandonedTemporaryFiles(in: $1)) }
        }
    }
}
