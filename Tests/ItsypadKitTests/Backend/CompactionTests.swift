import Testing

@testable import ItsypadBackend

@Suite("Compaction")
struct CompactionTests {
    @Test("compaction replaces the applied journal by an empty segment named after the next seq")
    func segments() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let backend = fixture.backend
        let saved = try backend.save(tab("a"), tab("b"))
        try backend.delete("b")

        let report = try backend.compact()
        #expect(report.compactedThrough == 3)
        #expect(report.segmentsRemoved == 1)
        #expect(report.journalBytesRemoved > 0)
        #expect(try fixture.state() == BackendState(appliedSeq: 3, compactedThrough: 3))
        #expect(try fixture.segmentPaths() == [fixture.layout.journalDirectory + "/0000000000000004.log"])

        // Seqs, and so tags, continue after the compaction point.
        #expect(try backend.save(tab("a", text: "edit", tag: saved[0].recordChangeTag)).first?.recordChangeTag == "4")
        // Compacting again right away has nothing more to drop from before, but drops the new change.
        #expect(try backend.compact().compactedThrough == 4)
        #expect(try backend.compact().segmentsRemoved == 0)
    }

    @Test("compaction rolls forward first, so a crashed writer's batch survives it")
    func rollsForward() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        var state = try fixture.state()
        state.appliedSeq = 0
        try state.write(to: fixture.layout.stateFile)
        try FileIO.removeFile(fixture.recordFile("ScratchTab", "a"))
        _ = try fixture.backend.compact()
        #expect(try fixture.backend.fetchAll(since: nil).changes.map(\.recordName) == ["a"])
        #expect(try FileIO.status(fixture.recordFile("ScratchTab", "a")) != nil)
    }

    @Test("unreferenced assets older than an hour are removed; referenced and recent ones stay")
    func assets() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let backend = fixture.backend
        let assets = try SweptAssets(in: backend)
        let recent = try backend.putAsset(Array("recent".utf8))
        for reference in [assets.kept, assets.orphan, assets.replaced] {
            try age(fixture.layout.assetFile(reference.fileChecksum), by: 2 * 60 * 60 * 1000)
        }
        try age(fixture.layout.assetFile(recent.fileChecksum), by: 10 * 60 * 1000)

        #expect(try backend.compact().assetsRemoved == 2)
        try assets.expectSwept(from: backend, keeping: recent)
    }

    @Test("temporary files left by crashed writers are removed once older than an hour")
    func temporaryFiles() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        let old = [fixture.path + "/.tmp-old", fixture.path + "/records/ScratchTab/.tmp-old", fixture.path + "/assets/.tmp-old"]
        let fresh = fixture.path + "/records/ScratchTab/.tmp-fresh"
        let unrelated = fixture.path + "/records/.DS_Store"
        for file in old + [fresh, unrelated] {
            try writeText("partial", to: file)
            try age(file, by: 2 * 60 * 60 * 1000)
        }
        try age(fresh, by: 60 * 1000)
        #expect(try fixture.backend.compact().temporaryFilesRemoved == 3)
        for file in old {
            #expect(try FileIO.status(file) == nil)
        }
        #expect(try FileIO.status(fresh) != nil)
        #expect(try FileIO.status(unrelated) != nil)
        // Readers ignore dot files.
        #expect(try fixture.backend.fetchAll(since: nil).changes.map(\.recordName) == ["a"])
    }

    @Test("modify compacts once the journal outgrows both the records and the threshold")
    func autoCompaction() throws {
        var tuning = BackendTuning()
        tuning.autoCompactionThreshold = 4096
        tuning.autoCompactionCheckInterval = 1
        let fixture = try TemporaryBackend(tuning: tuning)
        defer { fixture.remove() }
        let backend = fixture.backend
        let start = try backend.currentToken()
        let bigText = String(repeating: "b", count: 8000)
        // The first batch's line is larger than the records it wrote and than the threshold.
        try backend.save(contentsOf: (0..<10).map { tab("r\($0)", text: bigText) })
        #expect(try fixture.state().compactedThrough == 10)
        #expect(throws: BackendError.tokenExpired) { try backend.fetchChanges(since: start, limit: 10) }

        // Editing a small record: the journal passes the threshold long before it passes the ~80 KB of records.
        var tag = try backend.save(tab("hot")).first?.recordChangeTag
        let editText = String(repeating: "e", count: 1000)
        for _ in 0..<20 {
            tag = try backend.save(tab("hot", text: editText, tag: tag)).first?.recordChangeTag
        }
        #expect(try fixture.state().compactedThrough == 10)
        #expect(
            try fixture.backend.fetchChanges(since: TokenContents(zoneID: backend.zone().zoneID, seq: 10).token, limit: 100).changes.count
                == 21)
        var edits = 20
        while try fixture.state().compactedThrough == 10 && edits < 200 {
            tag = try backend.save(tab("hot", text: editText, tag: tag)).first?.recordChangeTag
            edits += 1
        }
        let state = try fixture.state()
        #expect((40...120).contains(edits))
        #expect(state.compactedThrough == state.appliedSeq)
        #expect(try backend.fetchAll(since: nil).changes.count == 11)
    }
}
