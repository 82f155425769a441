import Testing

@testable import ItsypadCLI
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The man pages: committed pages match the generator, document every command
/// and option, and render without warnings.
@Suite struct ManPageTests {
    static let pages = ManPage.pages(root: CommandTable.root)

    /// Every page in man/, generated or hand-written (itsypad-backend.5, kept in BackendManPage.swift).
    static let committed: [String] =
        (try? FileSystem.list(GeneratedFiles.root + "/man"))?
        .filter { $0.hasSuffix(".1") || $0.hasSuffix(".5") } ?? []

    @Test func committedPagesAreTheGeneratedOnes() throws {
        // itsypad-backend.5 is written by hand in the source, so that install can write it too.
        for page in Self.pages + [ManPage.backend] {
            try GeneratedFiles.check("man/" + page.name, page.text)
        }
        if !GeneratedFiles.regenerating {
            let stale = Set(Self.committed.filter { $0.hasSuffix(".1") }).subtracting(Self.pages.map(\.name))
            #expect(stale.isEmpty, "man/ has pages for commands that no longer exist: \(stale.sorted())")
        }
        #expect(Self.committed.contains("itsypad-backend.5"))
    }

    @Test func everyCommandAndOptionIsDocumented() throws {
        let root = CommandTable.root
        let text = Dictionary(uniqueKeysWithValues: Self.pages.map { ($0.name, $0.text) })
        for node in CompletionNode.walk(root) {
            let names = node.path.split(separator: " ").map(String.init)
            // A command is documented on its top-level command's page; the root's options on itsypad.1.
            let pageName = names.isEmpty ? root.name + ".1" : root.name + "-" + names[0] + ".1"
            let page = try #require(text[pageName], "no page \(pageName)")
            #expect(page.contains(Roff.code(([root.name] + names).joined(separator: " "))), "\(node.path) is missing from \(pageName)")
            for option in node.ownOptions {
                #expect(
                    page.contains("\\fB\(Roff.code("--" + option.long))\\fR"),
                    "--\(option.long) of '\(node.path)' is missing from \(pageName)")
            }
        }
        for command in root.visibleSubcommands {
            #expect(
                text[root.name + ".1"]!.contains(ManPage.reference(root.name + "-" + command.name, 1)),
                "itsypad(1) does not point to \(command.name)")
        }
    }

    @Test func pagesHaveTheUsualSections() {
        for page in Self.pages {
            for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SEE ALSO"] {
                #expect(page.text.contains(".SH \"\(section)\"\n"), "\(page.name) has no \(section)")
            }
        }
        let overview = Self.pages[0].text
        for section in ["COMMANDS", "EXAMPLES", "ENVIRONMENT", "FILES"] {
            #expect(overview.contains(".SH \"\(section)\"\n"), "itsypad.1 has no \(section)")
        }
        for variable in ["ITSYPAD_DATA_DIR", "XDG_DATA_HOME", "HOME", "VISUAL", "EDITOR", "COLUMNS", "NO_COLOR", "ITSYPAD_LOCK_TIMEOUT"] {
            #expect(overview.contains("\\fB\(variable)\\fR"), "\(variable) is not in ENVIRONMENT")
        }
        for status in [0, 1, 64, 75, 130] {
            #expect(overview.contains(".TP\n\\fB\(status)\\fR\n"), "exit status \(status) is not documented")
        }
    }

    @Test func escapesRoff() {
        #expect(Roff.prose("Use --data-dir, a key-value file or - for stdin.") == #"Use \-\-data\-dir, a key-value file or \- for stdin."#)
        #expect(Roff.prose(".hidden and 'quoted") == #"\&.hidden and 'quoted"#)
        #expect(Roff.prose("'quoted") == #"\&'quoted"#)
        #expect(Roff.code(#"printf 'a\n' | itsypad clip add --local"#) == #"printf 'a\en' | itsypad clip add \-\-local"#)
        #expect(Roff.prose("cut with \"…\"") == #"cut with "\[u2026]""#)
    }

    @Test(.needs(["groff"]), arguments: committed)
    func rendersWithGroffWithoutWarnings(_ page: String) throws {
        let result = try Process.run("groff", ["-man", "-ww", "-z", GeneratedFiles.root + "/man/" + page])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    @Test(.needs(["mandoc"]), arguments: committed)
    func passesMandocLint(_ page: String) throws {
        let result = try Process.run("mandoc", ["-T", "lint", "-W", "warning", GeneratedFiles.root + "/man/" + page])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
    }
}
