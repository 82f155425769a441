import Testing

@testable import ItsypadCLI
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite struct TabCommandTests {
    let device = Device()

    func new(_ arguments: [String], stdin: String? = nil) -> String {
        let (status, out, err) = device.inProcess(["tab", "new"] + arguments, stdin: stdin)
        #expect(status == 0, "tab new failed: \(err)")
        return out.trimmingNewline
    }

    func tab(_ reference: String) throws -> JSONValue {
        try JSONValue.parse(device.inProcess(["tab", "show", reference, "--json"]).1)
    }

    @Test func aNameThatIsAlsoAnotherTabsIdPrefixIsAmbiguous() throws {
        let target = new(["the target"])
        let prefix = String(target.prefix(8))
        let impostor = new(["--name", prefix, "named like the target's short id"])
        let (status, _, err) = device.inProcess(["tab", "rm", prefix])
        #expect(status == ExitCode.failure)
        #expect(err.contains(target) && err.contains(impostor), "both are listed: \(err)")
        #expect(device.inProcess(["tab", "show", target]).0 == 0, "nothing was removed")
        #expect(device.inProcess(["tab", "show", impostor]).0 == 0)
        // A full id is still unambiguous.
        #expect(device.inProcess(["tab", "rm", target]).0 == 0)
        #expect(device.inProcess(["tab", "rm", prefix]).0 == 0, "now the name is the only match")
    }

    @Test func createsFromTextOrStdinAndShowsExactBytes() throws {
        let fromText = new(["hello", "world"])
        #expect(device.inProcess(["tab", "show", fromText]).1 == "hello world")
        let content = "#!/usr/bin/env python3\nprint('hi')\n\n"
        let fromStdin = new([], stdin: content)
        #expect(device.inProcess(["tab", "show", fromStdin]).1 == content)
        #expect(try tab(fromStdin)["language"] == .string("python"))
        #expect(try tab(fromStdin)["name"] == .string("#!/usr/bin/env python3"))
    }

    @Test func explicitNameAndLanguageStick() throws {
        let id = new(["--name", "Notes", "--language", "md", "first line"])
        #expect(try tab("Notes")["language"] == .string("markdown"))
        #expect(device.inProcess(["tab", "edit", "Notes", "{\"a\": 1}"]).0 == 0)
        let edited = try tab(id)
        #expect(edited["name"] == .string("Notes"))
        #expect(edited["language"] == .string("markdown"))
        #expect(edited["languageLocked"] == .bool(true))
        #expect(device.inProcess(["tab", "edit", id, "--auto-language"]).0 == 0)
        #expect(try tab(id)["language"] == .string("json"))
        #expect(device.inProcess(["tab", "new", "--language", "klingon", "x"]).0 == 64)
    }

    @Test func unchangedEditKeepsLastModified() throws {
        let id = new(["same text"])
        let before = try tab(id)["lastModified"]
        #expect(device.inProcess(["tab", "edit", id, "same", "text"], now: Time.now() + 60_000).0 == 0)
        #expect(try tab(id)["lastModified"] == before)
        #expect(device.inProcess(["tab", "edit", id, "new text"], now: Time.now() + 60_000).0 == 0)
        #expect(try tab(id)["lastModified"] != before)
        #expect(try tab(id)["name"] == .string("new text"))
    }

    @Test func emptyPipedEditIsRefused() {
        let id = new(["keep me"])
        let (status, _, err) = device.inProcess(["tab", "edit", id], stdin: "")
        #expect(status == 1)
        #expect(err.contains("empty"))
        #expect(device.inProcess(["tab", "show", id]).1 == "keep me")
    }

    @Test func editorDrivesNewAndEdit() throws {
        let script = device.directory.file("editor.sh")
        device.directory.write("editor.sh", "#!/bin/sh\nprintf 'written by editor\\n' >> \"$1\"\n", mode: 0o755)
        let context = Context.memory(
            environment: ["ITSYPAD_DATA_DIR": device.dataDir, "EDITOR": script, "TMPDIR": device.directory.path],
            stdinIsTerminal: true)
        #expect(Itsypad.run(["tab", "new"], context: context) == 0)
        let id = context.standardOutput.text.trimmingNewline
        #expect(device.inProcess(["tab", "show", id]).1 == "written by editor\n")
        let edit = Context.memory(
            environment: ["ITSYPAD_DATA_DIR": device.dataDir, "VISUAL": script, "TMPDIR": device.directory.path],
            stdinIsTerminal: true)
        #expect(Itsypad.run(["tab", "edit", id], context: edit) == 0)
        #expect(device.inProcess(["tab", "show", id]).1 == "written by editor\nwritten by editor\n")
        // A failing editor changes nothing.
        let failing = Context.memory(
            environment: ["ITSYPAD_DATA_DIR": device.dataDir, "EDITOR": "false", "TMPDIR": device.directory.path],
            stdinIsTerminal: true)
        #expect(Itsypad.run(["tab", "edit", id], context: failing) == 1)
        #expect(device.inProcess(["tab", "show", id]).1 == "written by editor\nwritten by editor\n")
    }

    /// The editor is given a file named after the tab's language, so that it can highlight it.
    @Test(arguments: [("markdown", ".md"), ("html", ".html"), ("python", ".py"), ("json", ".json"), ("bash", ".sh"), ("plain", ".txt")])
    func theEditorsFileIsNamedAfterTheLanguage(_ language: String, _ suffix: String) throws {
        let script = device.directory.file("editor.sh")
        device.directory.write("editor.sh", "#!/bin/sh\nprintf '%s\\n' \"$1\" >> \"$0.names\"\n", mode: 0o755)
        let id = new(["--language", language, "text"])
        let context = Context.memory(
            environment: ["ITSYPAD_DATA_DIR": device.dataDir, "EDITOR": script, "TMPDIR": device.directory.path], stdinIsTerminal: true)
        #expect(Itsypad.run(["tab", "edit", id], context: context) == 0)
        #expect(Itsypad.run(["tab", "new", "--language", language], context: context) == 1, "the editor saved no text")
        let names = device.directory.read("editor.sh.names")?.split(separator: "\n") ?? []
        #expect(
            names.count == 2 && names.allSatisfy { $0.hasPrefix(device.directory.path + "/itsypad-") && $0.hasSuffix(suffix) }, "\(names)")
    }

    @Test func fileBackedTabsLiveInTheirFileAndStayLocal() throws {
        device.directory.write("notes.txt", "from the file\n")
        let id = new(["--file", device.directory.file("notes.txt")])
        #expect(device.inProcess(["tab", "show", id]).1 == "from the file\n")
        #expect(device.inProcess(["tab", "edit", id, "changed"]).0 == 0)
        #expect(device.directory.read("notes.txt") == "changed")
        #expect(try tab(id)["syncState"] == .string("localOnly"))
        #expect(try PendingQueue(path: device.dataDir + "/sync/pending.log").changes().isEmpty)
    }

    /// A user's file is written where it is: a symlink still points at it, and
    /// its inode, mode and hard links are those it had.
    @Test func editsWriteTheUsersFileInPlace() throws {
        device.directory.write("real.md", "# old\n")
        chmod(device.directory.file("real.md"), 0o664)
        #expect(link(device.directory.file("real.md"), device.directory.file("hardlink.md")) == 0)
        #expect(symlink(device.directory.file("real.md"), device.directory.file("link.md")) == 0)
        var before = stat()
        stat(device.directory.file("real.md"), &before)
        let id = new(["--file", device.directory.file("link.md")])
        #expect(device.inProcess(["tab", "edit", id, "# new"]).0 == 0)

        var linkInfo = stat(), after = stat()
        lstat(device.directory.file("link.md"), &linkInfo)
        stat(device.directory.file("real.md"), &after)
        #expect(linkInfo.st_mode & S_IFMT == S_IFLNK, "the symlink was replaced")
        #expect(device.directory.read("real.md") == "# new")
        #expect(device.directory.read("hardlink.md") == "# new")
        #expect(after.st_ino == before.st_ino)
        #expect(after.st_mode & 0o7777 == 0o664)
        #expect(after.st_nlink == 2)
        #expect(after.st_uid == before.st_uid && after.st_gid == before.st_gid)
    }

    /// A crash while the file was being written in place leaves the text in a
    /// journal; the next command finishes the write.
    @Test func anInterruptedWriteIsFinishedFromTheJournal() throws {
        device.directory.write("notes.txt", "old text\n")
        let id = new(["--file", device.directory.file("notes.txt")])
        try FileSystem.writeAtomically(device.dataDir + "/tabs/\(id).writing", Array("the new text\n".utf8))
        device.directory.write("notes.txt", "the new")
        #expect(device.inProcess(["tab", "show", id]).1 == "the new text\n")
        #expect(device.directory.read("notes.txt") == "the new text\n")
        #expect(!FileSystem.exists(device.dataDir + "/tabs/\(id).writing"))
    }

    @Test func aMissingFileIsRefusedUnlessCreateIsGiven() throws {
        let path = device.directory.file("new.rb")
        let (status, _, err) = device.inProcess(["tab", "new", "--file", path])
        #expect(status == 1)
        #expect(err.contains("does not exist (pass --create to create it)"), "\(err)")
        #expect(!FileSystem.exists(path))
        #expect(device.inProcess(["tab", "ls"]).1.isEmpty)

        let id = new(["--file", path, "--create"])
        #expect(FileSystem.isRegularFile(path))
        #expect(try tab(id)["name"] == .string("new.rb"))
        #expect(try tab(id)["language"] == .string("ruby"))
        #expect(device.inProcess(["tab", "new", "--create", "x"]).0 == 64)
    }

    @Test(arguments: [
        ("notes.md", "# Title\n", "markdown"), ("x.rb", "puts 1\n", "ruby"), ("Makefile", "all:\n", "makefile"),
        ("main.h", "int f(void);\n", "c"), ("todo.txt", "{\"looks\": \"like json\"}", "plain"),
        ("data.unknown", "{\"a\": 1}", "json"),
    ])
    func aFileBackedTabIsNamedAfterItsFileAndTakesItsLanguageFromTheExtension(_ name: String, _ content: String, _ language: String) throws
    {
        device.directory.write(name, content)
        let id = new(["--file", device.directory.file(name)])
        let shown = try tab(id)
        #expect(shown["name"] == .string(name))
        #expect(shown["language"] == .string(language))
        #expect(shown["content"] == .string(content))
    }

    /// `tab new </dev/null` in a script must not leave empty tabs behind; '' asks for one.
    @Test func emptyInputCreatesNoTabUnlessEmptyTextIsGiven() throws {
        let fromDevNull = try device.run("tab", "new")
        #expect(fromDevNull.status == 1)
        #expect(fromDevNull.stderr.contains("no tab was created"), "\(fromDevNull.stderr)")
        #expect(device.inProcess(["tab", "new"], stdin: " \n").0 == 1)
        #expect(device.inProcess(["tab", "ls"]).1.isEmpty)
        let empty = new([""])
        #expect(device.inProcess(["tab", "show", empty]) == (0, "", ""))
    }

    @Test func listsNewestFirstAndResolvesReferences() throws {
        let older = new(["older"])
        let newer = new(["newer"])
        let lines = device.inProcess(["tab", "ls"]).1.split(separator: "\n")
        #expect(lines.map { String($0.prefix(8)) } == [String(newer.prefix(8)), String(older.prefix(8))])
        #expect(device.inProcess(["tab", "show", "older"]).1 == "older")
        #expect(device.inProcess(["tab", "show", "nothing-like-it"]).0 == 1)
        #expect(device.inProcess(["tab", "rm", "older", "nothing-like-it"]).0 == 1)
        #expect(device.inProcess(["tab", "ls"]).1.split(separator: "\n").count == 2)
        #expect(device.inProcess(["tab", "rm", "older", "newer"]).0 == 0)
        #expect(device.inProcess(["tab", "ls"]).1.isEmpty)
    }

    @Test func ambiguousNamesNameTheCandidates() {
        _ = new(["--name", "dup", "one"])
        _ = new(["--name", "dup", "two"])
        let (status, _, err) = device.inProcess(["tab", "show", "dup"])
        #expect(status == 1)
        #expect(err.contains("several"))
        #expect(err.split(separator: "\n").count == 3)
    }

    @Test func ambiguousCandidatesAreSafeOnATerminal() {
        _ = new(["--name", "dup\u{1B}[2J", "one"])
        _ = new(["--name", "dup\u{1B}[2J", "two"])
        let context = Context.memory(environment: ["ITSYPAD_DATA_DIR": device.dataDir], stderrIsTerminal: true)
        #expect(Itsypad.run(["tab", "show", "dup\u{1B}[2J"], context: context) == 1)
        #expect(context.standardError.text.contains("several"))
        #expect(!context.standardError.text.contains("\u{1B}[2J"))
        // Messages are made safe wherever they go: a log read later on a terminal too.
        #expect(device.inProcess(["tab", "show", "dup\u{1B}[2J"]).2.contains("dup\u{FFFD}[2J"), "off a terminal too")
    }
}
