import Testing

@testable import ItsypadSupport

/// `Tests/Benchmarks/FAST-PATHS.md` names code and tests: a row whose file, symbol or comparison
/// test is gone, or whose gain is not over 10 %, is a ledger that no longer tells the truth.
@Suite struct FastPathLedgerTests {
    static let ledger = GeneratedFiles.root + "/Tests/Benchmarks/FAST-PATHS.md"

    /// One row of the ledger's table: its cells, backquoted words kept as they are.
    struct Row {
        let cells: [String]

        init?(_ line: Substring) {
            guard line.hasPrefix("| "), !line.hasPrefix("|---") else { return nil }
            cells = line.dropFirst(2).dropLast(2).split(separator: " | ", omittingEmptySubsequences: false).map(String.init)
        }

        var name: String { cells.first ?? "" }
        /// The words between backquotes in cell `index`.
        func quoted(_ index: Int) -> [String] {
            guard index < cells.count else { return [] }
            return cells[index].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
                .map { String($0.element) }
        }
    }

    static func rows(_ text: String) -> [Row] {
        Array(text.split(separator: "\n").compactMap(Row.init).dropFirst())
    }

    static func text(_ path: String) -> String? {
        (try? FileSystem.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
    }

    static let testSources: [String] =
        (try? LayeringTests.swiftFiles(in: GeneratedFiles.root + "/Tests/ItsypadKitTests"))?.compactMap(text) ?? []

    /// What is wrong with `row`: a missing file or symbol, a comparison test that does not exist, no gain over 10 %.
    static func problems(_ row: Row) -> [String] {
        guard row.cells.count == 6 else { return ["\(row.name): \(row.cells.count) cells, not 6"] }
        var problems: [String] = []
        let place = row.quoted(1)
        if let path = place.first, let source = text(GeneratedFiles.root + "/Sources/ItsypadKit/" + path) {
            for symbol in place.dropFirst() where !source.contains(symbol) { problems.append("\(row.name): \(path) has no \(symbol)") }
            if place.count < 2 { problems.append("\(row.name): no symbol named in \(path)") }
        } else {
            problems.append("\(row.name): no file \(place.first ?? "named")")
        }
        let tests = row.quoted(5)
        if tests.isEmpty { problems.append("\(row.name): no test compares it with the general path") }
        for test in tests {
            let parts = test.split(separator: ".")
            let found =
                parts.count == 2
                && testSources.contains { $0.contains("struct \(parts[0]) ") && $0.contains("func \(parts[1])(") }
            if !found { problems.append("\(row.name): no test \(test)") }
        }
        if !percentages(row.cells[4]).contains(where: { $0 > 10 }) {
            problems.append("\(row.name): no gain over 10 % in '\(row.cells[4])'")
        }
        return problems
    }

    /// The numbers written just before a `%` sign in `text`.
    static func percentages(_ text: String) -> [Int] {
        text.split(separator: "%", omittingEmptySubsequences: false).dropLast().compactMap { piece in
            Int(String(piece.reversed().drop { $0 == " " }.prefix { $0.isNumber }.reversed()))
        }
    }

    @Test func everyRowNamesCodeAndTestsThatExistAndAGainOverTenPercent() throws {
        let rows = Self.rows(try #require(Self.text(Self.ledger), "\(Self.ledger) is missing"))
        #expect(rows.count >= 5, "the ledger's table was not found")
        for problem in rows.flatMap(Self.problems) { Issue.record("FAST-PATHS.md: \(problem)") }
    }

    @Test func aRowNamingWhatIsGoneIsCaught() throws {
        let row = try #require(
            Row(
                "| gone | `Support/Text/ScalarKind.swift` `noSuchSymbol` | general | bench | 5 % | `ScalarKindTests.noSuchTest` |"))
        #expect(
            Self.problems(row) == [
                "gone: Support/Text/ScalarKind.swift has no noSuchSymbol", "gone: no test ScalarKindTests.noSuchTest",
                "gone: no gain over 10 % in '5 %'",
            ])
        let missingFile = try #require(
            Row("| gone | `Store/NoSuchFile.swift` `x` | g | b | −20 % | `ScalarKindTests.decodesWhatTheStandardLibraryDecodes` |"))
        #expect(Self.problems(missingFile) == ["gone: no file Store/NoSuchFile.swift"])
    }
}
