import Testing

@testable import ItsypadDesktop
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// What every `ClipboardSource` in `DesktopClipboard.sources` must do, run against a real desktop of its
/// kind: be the one chosen for its environment, put text and an image on the clipboard with their
/// types, read them back, and signal a copy made by another client.
@Suite(.tags(.desktop), .timeLimit(.minutes(15)))
struct ClipboardSourceConformanceTests {
    static func chosen(_ session: DesktopSession) throws -> any ClipboardSource {
        var environment = Process.baseEnvironment
        for (key, value) in session.environment { environment[key] = value }
        return try DesktopClipboard.source(environment: environment, primary: false)
    }

    @Test(arguments: DesktopSession.Kind.allCases)
    func eachKindIsChosenForItsEnvironment(_ kind: DesktopSession.Kind) throws {
        let environment = kind == .wayland ? ["WAYLAND_DISPLAY": "wayland-1", "DISPLAY": ":0"] : ["DISPLAY": ":0"]
        let source = try DesktopClipboard.source(environment: environment, primary: false)
        #expect(source.name == (kind == .wayland ? "the Wayland clipboard" : "the X11 clipboard"))
        #expect(DesktopClipboard.sources.filter { $0.isPresent(in: environment) }.count == (kind == .wayland ? 2 : 1))
    }

    @Test(arguments: DesktopSession.Kind.allCases)
    func textAndAnImageGoOnAndComeBackWithTheirTypes(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let session = try DesktopSession(kind)
        let source = try Self.chosen(session)
        try source.checkTools()
        let scratch = session.file("")
        try source.copy(Array("conformance ✓".utf8), type: DesktopClipboard.textType, scratchDirectory: scratch)
        #expect(eventually { try DesktopClipboard.bestType(source.offeredTypes() ?? []).map(DesktopClipboard.isText) == true })
        let text = try #require(DesktopClipboard.bestType(try source.offeredTypes() ?? []))
        #expect(try source.content(text, limit: 1 << 20) == Array("conformance ✓".utf8))
        #expect(try source.content(text, limit: 3) == nil, "more than the limit is refused, not cut")
        let image = TestImages.png(width: 16, height: 8)
        try source.copy(image, type: "image/png", scratchDirectory: scratch)
        #expect(eventually { try source.offeredTypes()?.contains("image/png") == true })
        #expect(try source.content("image/png", limit: 1 << 20) == image)
    }

    @Test(arguments: DesktopSession.Kind.allCases)
    func aCopyByAnotherClientIsSignalled(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let session = try DesktopSession(kind)
        let signal = try Self.chosen(session).changeSignal()
        defer { signal.stop() }
        // What the watcher's start reports (the current owner, or none) is taken first.
        _ = eventually(within: 1) { Self.readable(signal.descriptor) && signal.consume() && !Self.readable(signal.descriptor) }
        try session.copy(Array("from another client".utf8))
        #expect(eventually { Self.readable(signal.descriptor) })
        #expect(signal.consume())
    }

    /// An owner busy when its copy is signalled (a loaded machine, a slow application) answers later: what the
    /// signal asked of it must still be read then. wl-paste --watch asks for the content; a command that leaves
    /// without reading it has the owner killed by SIGPIPE (wl-copy 2.1 is), and the copy is gone unrecorded.
    @Test(arguments: DesktopSession.Kind.allCases)
    func anOwnerBusyWhenSignalledKeepsItsCopyOnOffer(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let session = try DesktopSession(kind)
        let text = "copied just before the watcher started"
        // As the README copies it: wl-copy given its text as an argument writes it itself (from standard
        // input, it has a child cat write it, and only that cat would die).
        if kind == .wayland {
            try #require(try session.client("wl-copy", [text]).status == 0)
        } else {
            try session.copy(Array(text.utf8))
        }
        let owner = try #require(session.copyingClients().first, "no client serves the copy")
        kill(owner, SIGSTOP)
        defer { kill(owner, SIGCONT) }
        let signal = try Self.chosen(session).changeSignal()
        defer { signal.stop() }
        // The offer at the start is signalled, and the signal's command does all it does without the owner.
        _ = eventually(within: 5) { Self.readable(signal.descriptor) }
        if let tool = signal as? Subprocess.Running {
            _ = eventually(within: 2) { DesktopClipboardTests.children(of: tool.pid).isEmpty }
        }
        kill(owner, SIGCONT)
        #expect(eventually { try session.paste().content == Array(text.utf8) }, "the copy is gone from the clipboard")
        #expect(DesktopSession.isRunning(owner), "the owner was killed")
    }

    /// An owner that never sends what the signal asked of it (frozen) holds back no later copy's signal.
    @Test(arguments: DesktopSession.Kind.allCases)
    func aFrozenOwnerHoldsBackNoLaterSignal(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let session = try DesktopSession(kind)
        try session.copy(Array("from a client that froze".utf8))
        let owner = try #require(session.copyingClients().first, "no client serves the copy")
        kill(owner, SIGSTOP)
        defer { kill(owner, SIGKILL) }
        let signal = try Self.chosen(session).changeSignal()
        defer { signal.stop() }
        _ = eventually(within: 5) { Self.readable(signal.descriptor) && signal.consume() && !Self.readable(signal.descriptor) }
        try session.copy(Array("the next copy".utf8))
        #expect(eventually(within: 60) { Self.readable(signal.descriptor) })
        #expect(signal.consume())
    }

    static func readable(_ descriptor: Int32) -> Bool {
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        return poll(&fds, 1, 0) > 0
    }
}
