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
            try BackendState(appliedSeq: latestSeq, compactedThrough: compactedThrough).write(to: layout.stateFile, files: files)
            try journal.createSegment(firstSeq: nextSeq)
            for segment in appliedSegments {
                removedBytes += try files.status(segment.path)?.size ?? 0
                try files.removeFile(segment.path)
            }
            try files.syncDirectory(layout.journalDirectory)
        }
        return CompactionReport(
            compactedThrough: compactedThrough,
            segmentsRemoved: appliedSegments.count,
            journalBytesRemoved: removedBytes,
            assetsRemoved: try removeAssets(notIn: referencedAssets),
            temporaryFilesRemoved: try removeAbandonedTemporaryFiles()
        )
    }

    /// Checksums of every asset a current record references. Malformed records are skipped: they
    /// cannot be read by any device, and must not keep the journal from being compacted.
    private func referencedAssetChecksums() throws -> Set<String> {
        var referenced = Set<String>()
        for id in try records.ids().ids {
            guard let record = try? records.record(id) else { continue }
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
        for name in try files.listDirectory(layout.assetsDirectory) ?? [] {
            guard AssetReference(fileChecksum: name, size: 0).hasValidChecksum, !referenced.contains(name) else { continue }
            let assetPath = layout.assetFile(name)
            if try isAbandoned(assetPath), try files.removeFile(assetPath) {
                removed += 1
            }
        }
        return removed
    }

    /// Removes temporary files left by writers that crashed (old enough not to belong to a live writer).
    private func removeAbandonedTemporaryFiles() throws -> Int {
        var directories = [path, layout.recordsDirectory, layout.assetsDirectory, layout.journalDirectory]
        for name in try files.listDirectory(layout.recordsDirectory) ?? []
        where try NameRules.isSafeFileName(name, maxLength: NameRules.maxRecordTypeLength)
            && files.status(records.typeDirectory(name))?.isDirectory == true
        {
            directories.append(records.typeDirectory(name))
        }
        var removed = 0
        for directory in directories {
            for name in try files.listDirectory(directory) ?? [] where name.hasPrefix(FileIO.temporaryPrefix) {
                let filePath = directory + "/" + name
                if try isAbandoned(filePath), try files.removeFile(filePath) {
                    removed += 1
                }
            }
        }
        return removed
    }

    private func isAbandoned(_ filePath: String) throws -> Bool {
        guard let status = try files.status(filePath), !status.isDirectory else { return false }
        let (age, overflow) = now().subtractingReportingOverflow(status.modifiedMilliseconds)
        return overflow || age > tuning.abandonedFileAge
    }
}
