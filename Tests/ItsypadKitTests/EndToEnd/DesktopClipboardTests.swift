import Testing

@testable import ItsypadCLI
@testable import ItsypadDesktop
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `clip watch` and `clip copy` against a real desktop: a headless sway with
/// wl-clipboard, and an Xvfb with xclip. Every wait is a bound against a hang,
/// never a measurement; the session, the watcher and every client are stopped
/// when a test ends.
@Suite(.tags(.desktop), .timeLimit(.minutes(15)))
struct DesktopClipboardTests {
    /// A desktop, a data directory and a watcher recording into it.
    final class Watched {
        let desktop: DesktopSession
        let device = Device()
        let watcher: RunningWatcher

        init(_ kind: DesktopSession.Kind, _ arguments: [String] = []) throws {
            desktop = try DesktopSession(kind)
            watcher = try RunningWatcher(device, arguments, environment: desktop.environment, command: ["clip", "watch"])
            try #require(eventually { self.watcher.stderr.contains("watching ") }, "\(watcher.stderr)")
        }

        func listed() throws -> String { try device.run("clip", "ls").stdout }

        /// Waits until a line of the watcher's stderr holds `text` (counted from the `after`-th such line).
        func logged(_ text: String, count: Int = 1) -> Bool {
            eventually { self.watcher.stderr.components(text).count > count }
        }
    }

    @Test(arguments: DesktopSession.Kind.allCases)
    func copiedTextReachesTheHistory(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let session = try Watched(kind)
        try session.desktop.copy(Array("copied on \(kind)".utf8))
        #expect(eventually { try session.listed().contains("\tcopied on \(kind)\n") }, "\(session.watcher.stderr)")
        // Byte for byte, whitespace and all.
        try session.desktop.copy(Array("  second,\twith spaces\n".utf8))
        #expect(eventually { try session.listed().contains("second, with spaces") }, "\(session.watcher.stderr)")
        let newest = String(try session.listed().prefix(8))
        #expect(try session.device.run("clip", "show", newest).stdout == "  second,\twith spaces\n")
        #expect(session.watcher.stop(SIGTERM) == 0, "\(session.watcher.stderr)")
    }

    /// A 1×1 PNG.
    static let png: [UInt8] = {
        let hex =
            "89504E470D0A1A0A0000000D49484452000000010000000108060000001F15C4890000000D4944415478DA63F8FFFF3F0005FE02FEA7D6A4F50000000049454E44AE426082"
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }()

    /// An image copied is kept byte for byte with its type, and clip copy offers it back as that type.
    @Test(arguments: DesktopSession.Kind.allCases)
    func aCopiedImageIsKeptAndCopiedBackWithItsType(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let session = try Watched(kind)
        try session.desktop.copy(Self.png, type: "image/png")
        #expect(eventually { try session.listed().contains("[[ image/png 1×1") }, "\(session.watcher.stderr)")
        let id = String(try session.listed().prefix(8))
        #expect(try session.device.run("clip", "show", id).stdoutBytes == Self.png)
        try session.desktop.copy(Array("text in between".utf8))
        #expect(eventually { try session.listed().contains("text in between") })
        let copied = try session.device.run("clip", "copy", id, environment: session.desktop.environment)
        #expect(copied.status == 0, "\(copied.stderr)")
        let pasted = try session.desktop.paste("image/png")
        #expect(pasted.types.contains("image/png"), "\(pasted.types)")
        #expect(pasted.content == Self.png)
        #expect(session.watcher.stop(SIGTERM) == 0, "\(session.watcher.stderr)")
    }

    @Test(arguments: DesktopSession.Kind.allCases)
    func thePrimarySelectionIsRecordedWithPrimaryOnly(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let session = try Watched(kind, ["--primary"])
        try session.desktop.copy(Array("on the clipboard".utf8))
        try session.desktop.copy(Array("selected with the mouse".utf8), primary: true)
        #expect(eventually { try session.listed().contains("\tselected with the mouse\n") }, "\(session.watcher.stderr)")
        #expect(try !session.listed().contains("on the clipboard"))
        #expect(session.watcher.stop(SIGINT) == 0)
    }

    /// A password manager offers its secret with x-kde-passwordManagerHint beside text/plain
    /// (KeePassXC does); wl-clipboard 2.1 says nothing of it, so the watcher must look itself.
    @Test(arguments: DesktopSession.Kind.allCases)
    func aPasswordManagersClipIsNeverStored(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let session = try Watched(kind)
        if let reason = try session.desktop.offerMissing { try Test.cancel(Comment(rawValue: reason)) }
        let text = kind == .wayland ? "text/plain" : "UTF8_STRING"
        _ = try session.desktop.offer([(text, "hunter2-the-password"), (DesktopClipboard.passwordManagerHint, "secret")])
        #expect(session.logged("skipped a clip marked by a password manager"), "\(session.watcher.stderr)")
        try session.desktop.copy(Array("after the password".utf8))
        #expect(eventually { try session.listed().contains("after the password") }, "\(session.watcher.stderr)")
        #expect(try !session.listed().contains("hunter2"))
        let exported = try session.device.run("export").stdout
        #expect(!exported.contains("hunter2"), "nothing of it stored or queued")
        let data = try Process.run("/bin/grep", ["-r", "-l", "hunter2", session.device.dataDir])
        #expect(data.stdout.isEmpty, "found in the data directory: \(data.stdout)")
        #expect(session.watcher.stop(SIGTERM) == 0)
    }

    /// An offer of no bytes, and an owner that exits halfway through the read, store nothing;
    /// the watcher goes on with the next copy.
    @Test(arguments: DesktopSession.Kind.allCases)
    func anEmptyOfferAndAnOwnerThatVanishesMidReadStoreNothing(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let session = try Watched(kind)
        if let reason = try session.desktop.offerMissing { try Test.cancel(Comment(rawValue: reason)) }
        let text = kind == .wayland ? "text/plain" : "UTF8_STRING"
        _ = try session.desktop.offer([(text, "")])
        _ = try session.desktop.offer([(text, "0123456789abcdefghij")], options: ["--die-on-send"])
        try session.desktop.copy(Array("the next copy".utf8))
        #expect(eventually { try session.listed().contains("the next copy") }, "\(session.watcher.stderr)")
        let listed = try session.listed()
        #expect(!listed.contains("01234"), "a cut-short read was stored: \(listed)")
        #expect(listed.split(separator: "\n").count == 1, "\(listed)")
        #expect(session.watcher.stop(SIGHUP) == 0)
    }

    @Test(arguments: DesktopSession.Kind.allCases)
    func clipCopyOffersTheEntryWithItsType(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let desktop = try DesktopSession(kind)
        let device = Device()
        let text = "to paste back: ünïcode\n"
        let id = try device.run("clip", "add", stdin: text).stdout.filter { !$0.isNewline }
        let copied = try device.run("clip", "copy", String(id.prefix(8)), environment: desktop.environment)
        #expect(copied.status == 0, "\(copied.stderr)")
        let pasted = try desktop.paste()
        #expect(pasted.types.contains(kind == .wayland ? DesktopClipboard.textType : "UTF8_STRING"), "\(pasted.types)")
        #expect(pasted.content == Array(text.utf8))
        // The picker's form: the id on standard input; Esc in fzf (nothing piped) copies nothing.
        try device.run("clip", "add", "another")
        #expect(try device.run("clip", "copy", stdin: id + "\n", environment: desktop.environment).status == 0)
        #expect(try desktop.paste().content == Array(text.utf8))
        let nothing = try device.run("clip", "copy", stdin: "", environment: desktop.environment)
        #expect(nothing.status == 0 && nothing.stderr.isEmpty, "\(nothing.stderr)")
        #expect(try desktop.paste().content == Array(text.utf8))
    }

    /// Copied back with `clip copy`, an entry is not recorded again: it is the newest already.
    @Test(arguments: DesktopSession.Kind.allCases)
    func copyingAnEntryBackAddsNothing(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let session = try Watched(kind)
        try session.desktop.copy(Array("picked again".utf8))
        #expect(eventually { try session.listed().contains("picked again") }, "\(session.watcher.stderr)")
        let copied = try session.device.run("clip", "copy", String(session.listed().prefix(8)), environment: session.desktop.environment)
        #expect(copied.status == 0, "\(copied.stderr)")
        try session.desktop.copy(Array("a marker".utf8))
        #expect(eventually { try session.listed().contains("a marker") })
        let listed = try session.listed()
        #expect(listed.split(separator: "\n").count == 2, "\(listed)")
    }

    /// The compositor or X server going away ends the watcher with 75 (try again later), at once: it never spins.
    @Test(arguments: DesktopSession.Kind.allCases)
    func aDesktopThatGoesAwayEndsTheWatcherWith75(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let session = try Watched(kind)
        session.desktop.stop()
        #expect(session.watcher.exit() == 75, "\(session.watcher.stderr)")
        #expect(session.watcher.stderr.contains("went away"), "\(session.watcher.stderr)")
    }

    /// Stopped, the watcher exits 0 and leaves no process of its own behind (wl-paste --watch).
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func aStopSignalEndsItWithExitZeroAndNoChildLeft(_ signal: Int32) throws {
        for kind in DesktopSession.Kind.allCases {
            try ExternalTool.require(kind.tools)
            let session = try Watched(kind)
            let children = Self.children(of: session.watcher.pid)
            #expect(kind == .x11 || !children.isEmpty, "wl-paste --watch is its child")
            #expect(session.watcher.stop(signal) == 0, "\(kind): \(session.watcher.stderr)")
            for child in children { #expect(kill(child, 0) != 0, "\(kind): child \(child) outlived the watcher") }
        }
    }

    /// The processes whose parent is `pid`, from /proc (read with cat: a /proc file's size is 0).
    static func children(of pid: pid_t) -> [pid_t] {
        let listed = try? Process.run("/bin/cat", ["/proc/\(pid)/task/\(pid)/children"])
        return (listed?.stdout ?? "").split(separator: " ").compactMap { pid_t($0.filter(\.isNumber)) }
    }

    /// The README's recipe, with wl-paste calling `clip add` for each change, still works.
    @Test func wlPasteWatchWithClipAddStillWorks() throws {
        try ExternalTool.require(DesktopSession.Kind.wayland.tools)
        let desktop = try DesktopSession(.wayland)
        let device = Device()
        var env = Process.baseEnvironment
        for (key, value) in desktop.environment { env[key] = value }
        env["ITSYPAD_DATA_DIR"] = device.dataDir
        let log = device.directory.file("wl-paste.log")
        let watcher = try Process.spawn(
            "wl-paste", ["--watch", Process.itsypad, "clip", "add"], stdin: "/dev/null", stdout: log, stderr: log, environment: env)
        defer {
            kill(watcher, SIGKILL)
            var status: Int32 = 0
            waitpid(watcher, &status, 0)
        }
        try desktop.copy(Array("through wl-paste --watch".utf8))
        #expect(
            eventually { try device.run("clip", "ls").stdout.contains("through wl-paste --watch") },
            "\(device.directory.read("wl-paste.log") ?? "")")
    }

    /// A display reached over TCP (ssh -X sets `localhost:N`): its cookie is the Xauthority entry
    /// xauth writes for that name, this machine's for the loopback address and the address's for
    /// any other; without it, the server refuses the watcher (exit 1, with the server's reason).
    @Test(arguments: ["localhost", "127.0.0.1", "127.0.0.2"])
    func aDisplayOverTCPIsWatchedWithItsCookie(_ host: String) throws {
        try ExternalTool.require(DesktopSession.Kind.x11.tools + ["xauth"])
        let desktop = try DesktopSession(.x11, overTCP: true)
        let number = desktop.environment["DISPLAY"]!.drop { $0 != ":" }.dropFirst()
        let cookies = desktop.file("client.xauth")
        let added = try Process.run("xauth", ["-f", cookies, "add", "\(host):\(number)", "MIT-MAGIC-COOKIE-1", desktop.cookie])
        try #require(added.status == 0, "\(added.stderr)")
        let tcp = ["DISPLAY": "\(host):\(number)", "XAUTHORITY": cookies]
        let device = Device()
        let watcher = try RunningWatcher(device, [], environment: tcp, command: ["clip", "watch"])
        try #require(eventually { watcher.stderr.contains("watching ") }, "\(watcher.stderr)")
        let copied = try Process.run("xclip", ["-i", "-selection", "clipboard"], stdin: Array("over tcp".utf8), environment: tcp)
        try #require(copied.status == 0, "\(copied.stderr)")
        #expect(eventually { try device.run("clip", "ls").stdout.contains("\tover tcp\n") }, "\(watcher.stderr)")
        #expect(watcher.stop(SIGTERM) == 0, "\(watcher.stderr)")

        let refused = try device.run("clip", "watch", environment: ["DISPLAY": "\(host):\(number)", "XAUTHORITY": "/nonexistent"])
        #expect(refused.status == 1 && refused.stderr.contains("the X server refused the connection"), "\(refused.stderr)")
    }
}

/// Without a desktop, and with bad options: no compositor or tool is needed.
@Suite struct DesktopClipboardRefusalTests {
    @Test(arguments: [["clip", "watch"], ["clip", "watch", "--primary"], ["clip", "copy", "abcd"]])
    func withoutADisplayItFailsWithExitOne(_ arguments: [String]) throws {
        let device = Device()
        try device.run("clip", "add", "an entry")
        let result = try device.runArguments(arguments, environment: ["WAYLAND_DISPLAY": "", "DISPLAY": ""])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("neither WAYLAND_DISPLAY nor DISPLAY is set"), "\(result.stderr)")
    }

    @Test func aDisplayWithoutItsToolSaysWhichPackageToInstall() throws {
        let device = Device()
        let result = try device.run("clip", "watch", environment: ["WAYLAND_DISPLAY": "wayland-404", "PATH": "/nonexistent"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("wl-paste is not on PATH: install wl-clipboard"), "\(result.stderr)")
    }

    /// An X display no server answers: try again later (75), at once.
    @Test func anXDisplayNobodyAnswersIsRetryLater() throws {
        try ExternalTool.require(["xclip"])
        let device = Device()
        let result = try device.run("clip", "watch", environment: ["DISPLAY": ":4049"])
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("cannot connect to the X server"), "\(result.stderr)")
    }

    @Test(
        arguments: [
            (":0", nil, "0"), (":12.1", nil, "12"), ("unix:3", nil, "3"), ("localhost:10.0", "localhost", "10"),
            ("127.0.0.2:5", "127.0.0.2", "5"), ("[::1]:2", "::1", "2"), ("::1:2", "::1", "2"), ("remote:0", "remote", "0"),
        ] as [(String, String?, String)])
    func displaysAreNamedByHostAndNumber(_ display: String, _ host: String?, _ number: String) {
        let parsed = X11SelectionEvents.parse(display)
        #expect(parsed?.host == host && parsed?.number == number)
    }

    @Test(arguments: ["host::0", ":", ":x", "", "host:", ":70000", "[]:0"])
    func otherNamesAreNotDisplays(_ display: String) {
        #expect(X11SelectionEvents.parse(display) == nil)
    }

    @Test func aDisplayNamedByAHostNameSaysToUseItsAddress() throws {
        let result = try Device().run("clip", "watch", environment: ["DISPLAY": "somewhere.example:0"])
        #expect(result.status == 1 && result.stderr.contains("by its address"), "\(result.stderr)")
    }

    @Test(
        arguments: [
            (["text/plain", "text/plain;charset=utf-8", "image/png"], "text/plain;charset=utf-8"),
            (["TARGETS", "TIMESTAMP", "STRING", "UTF8_STRING"], "UTF8_STRING"),
            (["text/html", "image/jpeg", "image/png"], "image/png"),
            (["image/x-xcf"], "image/x-xcf"),
            (["text/html", "application/x-qt-image"], nil),
            ([], nil),
        ] as [([String], String?)])
    func theBestTypeIsTextThenAnImage(_ offered: [String], _ best: String?) {
        #expect(DesktopClipboard.bestType(offered) == best)
    }
}

extension String {
    /// The pieces between occurrences of `separator`.
    fileprivate func components(_ separator: String) -> [Substring] { split(separator: separator, omittingEmptySubsequences: false) }
}
