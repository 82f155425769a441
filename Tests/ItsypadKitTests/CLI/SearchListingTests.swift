import Testing

@testable import ItsypadCLI
@testable import ItsypadModel
@testable import ItsypadSupport

/// `clip ls --search` lists exactly the clips whose text the rule matches
/// (`text.lowercased().contains(query.lowercased())`), in every script: the
/// anchored search, the lines it passes over unread and the lowercasing search
/// must agree with it wherever each one answers. And `clip ls` prints each
/// clip's preview as the preview rule writes it, whichever path wrote it.
@Suite struct SearchListingTests {
    static func rule(_ text: String, _ query: String) -> Bool {
        query.isEmpty || text.lowercased().contains(query.lowercased())
    }

    @Test(arguments: ScriptSamples.scripts.indices.map(Optional.some) + [nil])
    func listsWhatTheRuleMatches(_ script: Int?) throws {
        let device = Device()
        var generator = SeededGenerator(seed: 70 + UInt64(script ?? 99))
        var texts: [String: String] = [:]
        var clips: [JSONValue] = []
        for index in 0..<150 {
            let text = ScriptSamples.text(&generator, script: script, length: 10)
            guard !text.isEmpty else { continue }
            let id = Identifier.make()
            texts[id] = text
            clips.append(
                .object([
                    ("id", .string(id)), ("text", .string(text)),
                    ("timestamp", .string(Time.iso8601(1_767_225_600_000 + Int64(index) * 1000))),
                    ("pinned", .bool(false)), ("localOnly", .bool(false)),
                ]))
        }
        let document = JSONValue.object([
            ("format", .string("itsypad-export")), ("version", .integer(1)), ("tabs", .array([])), ("clips", .array(clips)),
            ("settings", .array([])),
        ])
        let imported = device.inProcess(["import", "-"], stdin: document.serialized())
        #expect(imported.0 == 0, "\(imported.2)")
        let all = Array(texts.values)
        var matched = 0
        for _ in 0..<40 {
            // A piece of a clip, its case changed now and then, or pieces of the script.
            var query = ScriptSamples.text(&generator, script: script, length: 2)
            if generator.chance(0.7), let text = all.randomElement(using: &generator), !text.isEmpty {
                let scalars = Array(text.unicodeScalars)
                let start = Int(generator.next() % UInt64(scalars.count))
                query = String(String.UnicodeScalarView(scalars[start..<min(scalars.count, start + Int(generator.next() % 5) + 1)]))
                if generator.chance(0.5) { query = query.uppercased() }
            }
            let (status, output, error) = device.inProcess(["clip", "ls", "--json", "--search", query])
            #expect(status == 0, "\(error)")
            let listed = Set(try JSONValue.parse(Array(output.utf8)).arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
            let expected = Set(texts.filter { SearchListingTests.rule($0.value, query) }.keys)
            #expect(listed == expected, "\(Array(query.unicodeScalars))")
            matched += expected.count
        }
        #expect(matched > 40, "the queries find clips")
    }

    /// Texts added one by one, imported, and read again after the index is rebuilt: each way the
    /// listing knows which texts are their own previews, and copies them as they are.
    @Test(arguments: ScriptSamples.scripts.indices.map(Optional.some) + [nil])
    func listsThePreviewsTheRuleWrites(_ script: Int?) throws {
        let device = Device()
        var generator = SeededGenerator(seed: 90 + UInt64(script ?? 99))
        var expected: [String] = []
        var clips: [JSONValue] = []
        for index in 0..<120 {
            // Short texts (mostly their own previews), with now and then whitespace to fold, escapes and long ones.
            var text = ScriptSamples.text(&generator, script: script, length: generator.chance(0.1) ? 150 : 12)
            if generator.chance(0.2) { text += ["\n", "  ", "\t", "\"", "\\", " "].randomElement(using: &generator)! + "x" }
            // (`clip add` refuses a text of only whitespace.)
            guard text.contains(where: { !$0.isWhitespace }) else { continue }
            let preview = PreviewTests.reference(text, limit: PreviewBuilder.listingLimit)
            if index % 2 == 0 {
                let added = device.inProcess(["clip", "add"], stdin: text, now: 1_767_225_600_000 + Int64(index) * 1000)
                #expect(added.0 == 0, "\(added.2) \(Array(text.unicodeScalars))")
                expected.append(String(added.1.prefix(8)) + "\t" + preview)
                continue
            }
            let id = Identifier.make()
            clips.append(
                .object([
                    ("id", .string(id)), ("text", .string(text)),
                    ("timestamp", .string(Time.iso8601(1_767_225_600_000 + Int64(index) * 1000))),
                    ("pinned", .bool(false)), ("localOnly", .bool(false)),
                ]))
            expected.append(String(id.prefix(8)) + "\t" + preview)
        }
        let document = JSONValue.object([
            ("format", .string("itsypad-export")), ("version", .integer(1)), ("tabs", .array([])), ("clips", .array(clips)),
            ("settings", .array([])),
        ])
        #expect(device.inProcess(["import", "-"], stdin: document.serialized()).0 == 0)
        let listing = expected.reversed().map { $0 + "\n" }.joined()
        #expect(device.inProcess(["clip", "ls"]).1 == listing)
        try FileSystem.remove(device.dataDir + "/clips/index")
        #expect(device.inProcess(["clip", "ls"]).1 == listing, "after the index is rebuilt")
    }
}
