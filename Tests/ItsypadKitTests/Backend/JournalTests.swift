import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

@Suite("Journal")
struct JournalTests {
    @Test("each commit appends exactly one line holding the whole batch")
    func lineFormat() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let first = try fixture.backend.save(tab("a"), tab("b"))
        _ = try fixture.backend.modify(
            saves: [RecordSave(record: tab("c"))],
            deletes: [RecordDelete(recordType: "ScratchTab", recordName: "a", ifTag: first[0].recordChangeTag)],
            device: "phone"
        )
        let segments = try fixture.segmentPaths()
        #expect(segments == [fixture.layout.journalDirectory + "/0000000000000001.log"])
        let text = try readText(segments[0])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(text.hasSuffix("\n"))
        #expect(lines.count == 2)
        #expect(lines[1].hasPrefix(#"{"seq":3,"device":"phone","time":1732200000000,"changes":["#))
        let batch = try JSONCoding.decode(JournalBatch.self, from: Array(lines[1].utf8))
        #expect(batch.seq == 3)
        #expect(batch.changes.map(\.seq) == [3, 4])
        #expect(batch.changes.map(\.op) == [.save, .delete])
        #expect(batch.changes[0].record?.recordChangeTag == "3")
        #expect(batch.changes[0].tag == "3")
        #expect(batch.changes[1].tag == first[0].recordChangeTag)
        #expect(batch.changes[1].record == nil)
        #expect(try fixture.state() == BackendState(appliedSeq: 4, compactedThrough: 0))
    }

    @Test(
        "a torn last line is ignored by readers and cut off by the next writer",
        arguments: [
            #"{"seq":2,"device":"x","ti"#,
            "not json at all\n",
        ])
    func tornTail(torn: String) throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        let token = try fixture.backend.currentToken()
        let segment = try #require(try fixture.segmentPaths().first)
        let committed = try readText(segment)
        try appendText(torn, to: segment)

        #expect(try fixture.backend.fetchAll(since: nil).changes.map(\.recordName) == ["a"])
        #expect(try fixture.backend.fetchChanges(since: token, limit: 10).changes == [])
        #expect(try readText(segment) == committed + torn, "readers must not write")

        let saved = try fixture.backend.save(tab("b"))
        #expect(saved.first?.recordChangeTag == "2")
        let text = try readText(segment)
        #expect(text.hasPrefix(committed))
        #expect(!text.contains(torn))
        #expect(text.split(separator: "\n").count == 2)
        #expect(try fixture.backend.fetchChanges(since: token, limit: 10).changes == saved.map(Change.saved))
    }

    @Test("a committed batch not yet applied to records/ (crash) is visible to readers and rolled forward by the next writer")
    func crashRecovery() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"), tab("b"))
        let token = try fixture.backend.currentToken()
        // What a writer that crashed right after its fsync leaves behind: the line, but no record files or state.
        let line =
            #"{"seq":3,"device":"crashed","time":1732200000000,"changes":[{"seq":3,"op":"save","recordType":"ScratchTab","recordName":"ghost","tag":"3","record":{"recordName":"ghost","recordType":"ScratchTab","recordChangeTag":"3","fields":{"name":{"value":"boo","type":"STRING"}},"created":{"timestamp":1732200000000,"deviceID":"crashed"},"modified":{"timestamp":1732200000000,"deviceID":"crashed"}}},{"seq":4,"op":"delete","recordType":"ScratchTab","recordName":"b","tag":"2"}]}"#
        try appendText(line + "\n", to: try #require(try fixture.segmentPaths().first))
        #expect(try FileIO.status(fixture.recordFile("ScratchTab", "ghost")) == nil)

        #expect(try fixture.backend.fetchAll(since: nil).changes.map(\.recordName) == ["a", "ghost"])
        let incremental = try fixture.backend.fetchChanges(since: token, limit: 10).changes
        #expect(incremental.map(\.recordName) == ["ghost", "b"])
        #expect(incremental.last == .deleted(recordType: "ScratchTab", recordName: "b"))
        // A device that saw b at tag 2 now conflicts with nothing: b is gone.
        let result = try fixture.backend.modify(saves: [RecordSave(record: tab("b", text: "edit", tag: "2"))], deletes: [], device: "A")
        #expect(result.failures.map(\.error) == [.unknownItem])
        // That writer rolled the batch forward.
        #expect(try FileIO.status(fixture.recordFile("ScratchTab", "ghost")) != nil)
        #expect(try FileIO.status(fixture.recordFile("ScratchTab", "b")) == nil)
        #expect(try fixture.state().appliedSeq == 4)
        #expect(try fixture.backend.save(tab("c")).first?.recordChangeTag == "5")
    }

    @Test("an invalid line before the end is quarantined, not taken for a torn write, and the rest is read")
    func corruptMiddleLine() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let token = try fixture.backend.currentToken()
        try fixture.backend.save(tab("a"))
        try fixture.backend.save(tab("b"))
        let segment = try #require(try fixture.segmentPaths().first)
        let lines = try readText(segment).split(separator: "\n")
        try writeText("garbage\n" + lines[1] + "\n", to: segment)
        let page = try fixture.backend.fetchChanges(since: token, limit: 10)
        #expect(page.changes.map(\.recordName) == ["b"])
        #expect(
            page.quarantined == [
                QuarantinedItem(id: nil, location: segment + ", line at byte 0", reason: "not a valid journal batch (not JSON)")
            ])
        // Writers go on after it too.
        #expect(try fixture.backend.save(tab("c")).first?.recordChangeTag == "3")
    }

    @Test("batches go to new segments past the size limit; fetches span them and open only what they need")
    func segmentRollover() throws {
        var tuning = BackendTuning()
        tuning.segmentSizeLimit = 1
        let fixture = try TemporaryBackend(tuning: tuning)
        defer { fixture.remove() }
        let start = try fixture.backend.currentToken()
        for index in 1...5 {
            try fixture.backend.save(tab("r\(index)"))
        }
        #expect(try fixture.segmentPaths().map { String($0.suffix(6)) } == (1...5).map { "0\($0).log" })
        let all = try fixture.backend.fetchAll(since: start, limit: 2)
        #expect(all.changes.map(\.recordName) == (1...5).map { "r\($0)" })
        #expect(all.pages == 3)

        let zoneID = try fixture.backend.zone().zoneID
        var stats = JournalReadStats()
        let page = try fixture.backend.fetchChanges(since: TokenContents(zoneID: zoneID, seq: 3).token, limit: 10, stats: &stats)
        #expect(page.changes.map(\.recordName) == ["r4", "r5"])
        #expect(stats.segmentsOpened == 2)
    }

    @Test("fetching 1 change after 5,000 records reads only that change", .timeLimit(.minutes(5)))
    func incrementalCost() throws {
        var tuning = BackendTuning()
        tuning.autoCompaction = false
        tuning.segmentSizeLimit = 16 * 1024
        let fixture = try TemporaryBackend(tuning: tuning)
        defer { fixture.remove() }
        let backend = fixture.backend
        for batch in 0..<13 {
            let names = (batch * 400..<min(5000, (batch + 1) * 400)).map { "r\($0)" }
            try backend.save(contentsOf: names.map { tab($0) })
        }
        let fullFetch = try backend.fetchAll(since: nil, limit: 1000)
        #expect(fullFetch.changes.count == 5000)
        let segmentsBefore = try fixture.segmentPaths().count
        #expect(segmentsBefore > 10)

        // A token without a hint: the segment is found by its name.
        let one = try #require(try backend.save(tab("r1", text: "edit", tag: "2")).first)
        var stats = JournalReadStats()
        let page = try backend.fetchChanges(since: fullFetch.token, limit: 100, stats: &stats)
        #expect(page.changes == [.saved(one)])
        #expect(stats.segmentsOpened == 1)
        #expect(stats.changesDecoded == 1)
        let lastLine = try readText(try #require(try fixture.segmentPaths().last))
        #expect(stats.bytesRead == lastLine.utf8.count)

        // A token with a hint: reading starts at the byte where the next change begins.
        let two = try #require(try backend.save(tab("r2", text: "edit", tag: "3")).first)
        stats = JournalReadStats()
        let next = try backend.fetchChanges(since: page.token, limit: 100, stats: &stats)
        #expect(next.changes == [.saved(two)])
        #expect(stats.changesDecoded == 1)
        // The line itself plus the newline before it, which shows the hint lands on a line start.
        let lines = try readText(try #require(try fixture.segmentPaths().last)).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(stats.bytesRead == (lines.last?.utf8.count ?? 0) + 2)
    }

    @Test("within one large segment, lines before the token are skipped without decoding")
    func skipWithoutDecoding() throws {
        var tuning = BackendTuning()
        tuning.autoCompaction = false
        let fixture = try TemporaryBackend(tuning: tuning)
        defer { fixture.remove() }
        for batch in 0..<5 {
            try fixture.backend.save(contentsOf: (0..<100).map { tab("r\(batch)-\($0)") })
        }
        let zoneID = try fixture.backend.zone().zoneID
        #expect(try fixture.segmentPaths().count == 1)
        var stats = JournalReadStats()
        let page = try fixture.backend.fetchChanges(since: TokenContents(zoneID: zoneID, seq: 450).token, limit: 1000, stats: &stats)
        #expect(page.changes.count == 50)
        #expect(stats.batchesDecoded == 1)
        #expect(stats.changesDecoded == 100)
    }
}

@Suite("Journal: untrusted lines")
struct JournalUntrustedLineTests {
    @Test(
        "peeking a line's seq never traps, whatever its digits",
        arguments: [
            ("{\"seq\":9223372036854775807,", nil), ("{\"seq\":9223372036854775808,", nil), ("{\"seq\":99999999999999999999999,", nil),
            ("{\"seq\":9007199254740992,", Int64(1) << 53), ("{\"seq\":12,", 12), ("{\"seq\":-1,", nil), ("{\"seq\":,", nil),
        ] as [(String, Int64?)])
    func peekSeq(_ line: String, _ expected: Int64?) {
        #expect(Journal.peekSeq(Array(line.utf8)[...]) == expected)
    }

    @Test(
        "a line's structure is checked before its changes, each change on its own",
        arguments: [
            (#"{"seq":1,"device":"d","time":0,"changes":[]}"#, "non-empty changes"),
            (#"{"seq":0,"device":"d","time":0,"changes":[{"seq":0,"op":"delete","recordType":"T","recordName":"a"}]}"#, "seq (1"),
            (
                #"{"seq":9007199254740992,"device":"d","time":0,"changes":[{"seq":9007199254740992,"op":"delete","recordType":"T","recordName":"a"},{"seq":9007199254740993,"op":"delete","recordType":"T","recordName":"b"}]}"#,
                "seq (1"
            ),
            (#"{"seq":1,"device":"d","time":0,"changes":[{"seq":2,"op":"delete","recordType":"T","recordName":"a"}]}"#, "out of sequence"),
            (#"[1,2,3]"#, "seq (1"),
        ])
    func malformedLines(_ line: String, _ reason: String) {
        guard case .failure(let problem) = Journal.decodeBatch(Array(line.utf8)[...], location: "here") else {
            Issue.record("\(line) was accepted")
            return
        }
        #expect(problem.item.reason.contains(reason), "\(problem.item.reason)")
        #expect(problem.item.location == "here" && problem.item.id == nil)
    }

    @Test("one bad change is skipped with its record named, the others in the line stand")
    func malformedChange() throws {
        let line =
            #"{"seq":5,"device":"d","time":0,"changes":[{"seq":5,"op":"delete","recordType":"ScratchTab","recordName":"../x"},{"seq":6,"op":"save","recordType":"ScratchTab","recordName":"good","tag":"6","record":{"recordName":"good","recordType":"ScratchTab","recordChangeTag":"99","fields":{}}},{"seq":7,"op":"delete","recordType":"ScratchTab","recordName":"ok"}]}"#
        guard case .success(let batch) = Journal.decodeBatch(Array(line.utf8)[...], location: "here") else {
            Issue.record("the line was refused")
            return
        }
        #expect(batch.seq == 5 && batch.lastSeq == 7)
        guard batch.changes.count == 3, case .malformed(let traversal) = batch.changes[0], case .malformed(let badTag) = batch.changes[1],
            case .change(let delete) = batch.changes[2]
        else {
            Issue.record("unexpected \(batch.changes)")
            return
        }
        #expect(traversal.id == nil && traversal.location == "here, change 5")
        #expect(badTag.id == RecordID(recordType: "ScratchTab", recordName: "good") && badTag.reason.contains("change tag"))
        #expect(delete.recordName == "ok")
    }
}
