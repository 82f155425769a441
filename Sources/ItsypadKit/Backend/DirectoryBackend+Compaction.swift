extension DirectoryBackend {
    public func compact() throws -> CompactionReport {
        _ = try readZone()
        return try withWriteLock {
            _ = try readZone()
            return try compactHoldingLock()
        }
    }

    /// Rolls forward, then replaces the journal by an empty segment; sweeps assets and temporary files.
    func compactHoldingLock() throws -> CompactionReport {
        let (tail, state) = try prepareForWrite()
        // Parse every record before dropping anything: if one is corrupt, the journal may hold its last good version.
        let referencedAssets = try referencedAssetChecksums()
        let latestSeq = max(tail.latestSeq, state.appliedSeq)
        let nextSeq = latestSeq + 1
        // After the roll-forward every segment is applied, except an empty one already waiting for nextSeq.
        let appliedSegments = try journal.segments().filter { $0.firstSeq != nextSeq }
        var compactedThrough = state.compactedThrough
        var removedBytes = 0
        if !appliedSegments.isEmpty {
            compactedThrough = latestSeq
            // Order matters to readers: expire the old tokens, make sure the next segment exists
            // (it carries the latest seq in its name), then drop the old segments.
            try BackendState(appliedSeq: latestSeq, compactedThrough: compactedThrough).write(to: layout.stateFile)
            try journal.createSegment(firstSeq: nextSeq)
            for segment in appliedSegments {
                removedBytes += try FileIO.status(segment.path)?.size ?? 0
                try FileIO.removeFile(segment.path)
            }
            try FileIO.syncDirectory(layout.journalDirectory)
        }
        return CompactionReport(
            compactedThrough: compactedThrough,
            segmentsRemoved: appliedSegments.count,
            journalBytesRemoved: removedBytes,
            assetsRemoved: try removeAssets(notIn: referencedAssets),
            temporaryFilesRemoved: try removeAbandonedTemporaryFiles()
        )
    }

    /// Checksums of every asset a current record references.
    private func referencedAssetChecksums() throws -> Set<String> {
        var referenced = Set<String>()
        for id in try records.ids() {
            guard let record = try records.record(id) else { continue }
            for case .asset(let reference) in record.fields.values {
                referenced.insert(reference.fileChecksum)
            }
        }
        return referenced
    }

    /// Removes unreferenced assets, unless recently written: a device may be between `putAsset`
    /// and the `modify` that references it.
    private func removeAssets(notIn referenced: Set<String>) throws -> Int {
        var removed = 0
        for name in try FileIO.listDirectory(layout.assetsDirectory) ?? [] {
            guard AssetReference(fileChecksum: name, size: 0).hasValidChecksum, !referenced.contains(name) else { continue }
            let assetPath = layout.assetFile(name)
            if try isAbandoned(assetPath), try FileIO.removeFile(assetPath) {
                removed += 1
            }
        }
        return removed
    }

    /// Removes temporary files left by writers that crashed (old enough not to belong to a live writer).
    private func removeAbandonedTemporaryFiles() throws -> Int {
        var directories = [path, layout.recordsDirectory, layout.assetsDirectory, layout.journalDirectory]
        for name in try FileIO.listDirectory(layout.recordsDirectory) ?? [] where !name.hasPrefix(".") {
            directories.append(records.typeDirectory(name))
        }
        var removed = 0
        for directory in directories {
            for name in try FileIO.listDirectory(directory) ?? [] where name.hasPrefix(FileIO.temporaryPrefix) {
                let filePath = directory + "/" + name
                if try isAbandoned(filePath), try FileIO.removeFile(filePath) {
                    removed += 1
                }
            }
        }
        return removed
    }

    private func isAbandoned(_ filePath: String) throws -> Bool {
        guard let status = try FileIO.status(filePath), !status.isDirectory else { return false }
        return now() - status.modifiedMilliseconds > tuning.abandonedFileAge
    }
}
