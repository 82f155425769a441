import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Progress of long work (an import, a first sync) on standard error: redrawn in place on a
/// terminal (a pseudo-terminal run by python3's pty support) and erased when done; nothing of it
/// through a pipe or with --quiet.
@Suite(.needs(["python3"]))
struct ProgressTests {
    let device = Device()
    let backend = TemporaryDirectory()

    /// Runs the binary with standard error on a new pseudo-terminal (standard output to /dev/null)
    /// and prints its exit status and every byte the terminal showed.
    static let driver = #"""
        import json, os, select, subprocess, sys
        master, slave = os.openpty()
        env = {"ITSYPAD_DATA_DIR": sys.argv[1], "PATH": "/usr/bin:/bin", "HOME": "/nonexistent-home", "LANG": "C.UTF-8", "TERM": "xterm"}
        child = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, env=env)
        os.close(slave)
        shown = b""
        while True:
            if select.select([master], [], [], 0.1)[0]:
                try: chunk = os.read(master, 65536)
                except OSError: break
                if not chunk: break
                shown += chunk
            elif child.poll() is not None and not select.select([master], [], [], 0.2)[0]:
                break
        print(json.dumps({"status": child.wait(), "shown": shown.decode("utf-8", "replace")}))
        """#

    func onATerminal(_ arguments: String...) throws -> (status: Int64, shown: String) {
        let result = try Process.run(
            "python3", ["-c", ProgressTests.driver, device.dataDir, Process.itsypad] + arguments, timeout: 120)
        try #require(result.status == 0, "\(result.stderr)")
        let report = try JSONValue.parse(Array(result.stdout.utf8))
        guard case .string(let shown)? = report["shown"] else { throw ItsypadError.failure("unexpected report \(result.stdout)") }
        return (try #require(report["status"]?.int64Value), shown)
    }

    /// A clipman history of `count` clips.
    func clipmanHistory(clips count: Int) throws -> String {
        let path = backend.path + "/../clipman-\(count).json"
        try FileSystem.writeAtomically(path, Array(("[" + (0..<count).map { "\"clip \($0)\"" }.joined(separator: ",") + "]").utf8))
        return path
    }

    /// An export of `count` clips.
    func exportFile(clips count: Int) throws -> String {
        let source = Device()
        try #require(try source.run("import", "--from", "clipman", try clipmanHistory(clips: count)).status == 0)
        let exported = try source.run("export")
        try #require(exported.status == 0, "\(exported.stderr)")
        let path = backend.path + "/../export-\(count).json"
        try FileSystem.writeAtomically(path, Array(exported.stdout.utf8))
        return path
    }

    static let erase = "\r\u{1B}[K"

    /// Every drawing is an erase and a line that holds no other control; the last is erased before
    /// the closing note.
    func expectDrawn(_ shown: String, _ label: String, closing: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let erase = ProgressTests.erase
        #expect(shown.hasPrefix(erase + label + ": "), "\(shown.debugDescription)", sourceLocation: sourceLocation)
        let drawings = shown.components(separatedBy: erase).dropFirst()
        #expect(drawings.count >= 2, "\(shown.debugDescription)", sourceLocation: sourceLocation)
        for drawing in drawings.dropLast() {
            #expect(
                drawing.hasPrefix(label + ": ") && !drawing.contains("\r") && !drawing.contains("\n"), "\(drawing.debugDescription)",
                sourceLocation: sourceLocation)
        }
        #expect(
            drawings.last?.hasPrefix(closing) == true, "erased before \(closing): \(shown.debugDescription)", sourceLocation: sourceLocation
        )
    }

    @Test func anImportAndAFirstSyncShowProgressOnATerminalOnly() throws {
        let export = try exportFile(clips: 900)

        let imported = try onATerminal("import", export)
        #expect(imported.status == 0, "\(imported.shown)")
        expectDrawn(imported.shown, "importing", closing: "imported 0 tabs, 900 clips")
        #expect(imported.shown.contains(" MB"))

        let synced = try onATerminal("sync", "enable", backend.path + "/b")
        #expect(synced.status == 0, "\(synced.shown)")
        expectDrawn(synced.shown, "sending", closing: "")
        #expect(
            synced.shown.contains(" of 90") && synced.shown.contains(" records"),
            "the total read from the queue: \(synced.shown.debugDescription)")

        // Through a pipe: not a byte of it.
        let again = Device()
        let piped = try again.run("import", export)
        #expect(piped.status == 0 && !piped.stderr.contains("\u{1B}") && !piped.stderr.contains("importing"), "\(piped.stderr)")
    }

    @Test func quietShowsNothing() throws {
        let export = try exportFile(clips: 500)
        let imported = try onATerminal("--quiet", "import", export)
        #expect(imported.status == 0)
        #expect(imported.shown == "", "\(imported.shown.debugDescription)")
        let synced = try onATerminal("--quiet", "sync", "enable", backend.path + "/b")
        #expect(synced.status == 0)
        #expect(synced.shown == "", "\(synced.shown.debugDescription)")
    }

    @Test func importFromClipmanShowsRecordsOfTotal() throws {
        let imported = try onATerminal("import", "--from", "clipman", try clipmanHistory(clips: 700))
        #expect(imported.status == 0, "\(imported.shown)")
        expectDrawn(imported.shown, "importing", closing: "imported 700 clips")
        #expect(imported.shown.contains(" of 700 records"), "\(imported.shown.debugDescription)")
    }
}
