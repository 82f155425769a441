import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Copy here, paste there: two desktops of one kind (two headless sways, or two Xvfbs), two data
/// directories sharing one folder backend, and on each `sync watch` and `clip watch --follow`.
/// A copy on one must come out of the other's clipboard; nothing echoes back.
@Suite(.tags(.desktop), .timeLimit(.minutes(15)))
struct ClipFollowTests {
    /// One machine: its desktop, its data directory and its two watchers.
    final class Machine {
        let desktop: DesktopSession
        let device = Device()
        let follower: RunningWatcher
        var sync: RunningWatcher?

        init(_ kind: DesktopSession.Kind, backend: String, window: Int? = nil, syncing: Bool = true) throws {
            desktop = try DesktopSession(kind)
            try #require(try device.run("sync", "enable", backend).status == 0)
            if let window { try #require(try device.run("settings", "set", "clipboard.followWindow", String(window)).status == 0) }
            follower = try RunningWatcher(device, ["--follow"], environment: desktop.environment, command: ["clip", "watch"])
            try #require(eventually { self.follower.stderr.contains("following clips from other devices") }, "\(follower.stderr)")
            if syncing { try startSync() }
        }

        func startSync() throws {
            let sync = try RunningWatcher(device, ["--interval", "600"])
            self.sync = sync
            try #require(eventually { sync.stderr.contains("synced:") }, "\(sync.stderr)")
        }

        /// The clipboard's text now.
        func pasted() throws -> String { String(decoding: try desktop.paste().content, as: UTF8.self) }

        /// The texts in the history, newest first.
        func history() throws -> [String] {
            let listed = try JSONValue.parse(try device.run("clip", "ls", "--json").stdout).arrayValue ?? []
            return listed.map { $0["text"]?.stringValue ?? "" }
        }

        var log: String { follower.stderr + (sync?.stderr ?? "") }
    }

    /// Ten seconds here; Tests/Soak/follow-soak.sh sets a minute.
    static let secondsOfCopies = getenv("ITSYPAD_FOLLOW_SOAK_SECONDS").flatMap { Double(String(cString: $0)) } ?? 10

    let shared = TemporaryDirectory()
    var backend: String { shared.path + "/backend" }

    @Test(arguments: DesktopSession.Kind.allCases)
    func aCopyOnOneIsOnTheOthersClipboard(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let (a, b) = (try Machine(kind, backend: backend), try Machine(kind, backend: backend))
        try a.desktop.copy(Array("copied on A".utf8))
        #expect(eventually { try b.pasted() == "copied on A" }, "\(a.log)\n\(b.log)")
        try b.desktop.copy(Array("copied on B".utf8))
        #expect(eventually { try a.pasted() == "copied on B" }, "\(a.log)\n\(b.log)")
        // An image, byte for byte, with its type.
        let image = TestImages.png(width: 64, height: 48)
        try a.desktop.copy(image, type: "image/png")
        #expect(eventually { try b.desktop.paste("image/png").content == image }, "\(a.log)\n\(b.log)")
        #expect(try b.desktop.paste().types.contains("image/png"))
    }

    /// A secret copied on A stays on A (local-only: never synced); the next copy arrives alone.
    @Test(arguments: DesktopSession.Kind.allCases)
    func aSecretOrLocalOnlyClipNeverArrives(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let (a, b) = (try Machine(kind, backend: backend), try Machine(kind, backend: backend))
        let secret = "ghp_" + String(repeating: "a1B2", count: 9)
        try a.desktop.copy(Array(secret.utf8))
        #expect(eventually { try a.history().contains(secret) }, "\(a.log)")
        try a.device.run("clip", "add", "--local", "kept on A")
        try a.desktop.copy(Array("after the secret".utf8))
        #expect(eventually { try b.pasted() == "after the secret" }, "\(a.log)\n\(b.log)")
        #expect(try !b.history().contains(secret) && !b.history().contains("kept on A"))
    }

    /// Copies on both sides in turn, each as soon as the other side's copy is on this clipboard: each
    /// history holds exactly the copies made (no echo), and both clipboards end on the newest.
    @Test(arguments: DesktopSession.Kind.allCases)
    func copiesOnBothSidesLeaveExactlyTheCopiesMade(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let (a, b) = (try Machine(kind, backend: backend), try Machine(kind, backend: backend))
        var made: [String] = []
        let start = Monotonic.seconds()
        var round = 0
        while Monotonic.seconds() - start < Self.secondsOfCopies {
            for (name, machine) in [("A", a), ("B", b)] {
                let text = "copy \(round) on \(name)"
                try machine.desktop.copy(Array(text.utf8))
                made.append(text)
                // On the other clipboard, and so in both histories, before the next copy.
                let other = machine === a ? b : a
                #expect(eventually { try other.pasted() == text }, "\(machine.log)\n\(other.log)")
            }
            round += 1
        }
        // A last copy, which each side sees after every echo the copies before could have caused.
        try a.desktop.copy(Array("the last copy".utf8))
        made.append("the last copy")
        #expect(eventually { try b.pasted() == "the last copy" && b.history().count == made.count }, "\(b.log)")
        #expect(eventually { try a.history().count == made.count }, "\(a.log)")
        for machine in [a, b] {
            let history = try machine.history()
            #expect(history.count == made.count && Set(history) == Set(made), "\(history)")
        }
        #expect(try a.pasted() == "the last copy")
    }

    /// B was away: a clip A copied longer than B's window ago does not overwrite B's clipboard.
    @Test(arguments: DesktopSession.Kind.allCases)
    func aClipOlderThanTheWindowDoesNotOverwrite(_ kind: DesktopSession.Kind) throws {
        try ExternalTool.require(kind.tools)
        let a = try Machine(kind, backend: backend)
        let b = try Machine(kind, backend: backend, window: 1, syncing: false)
        try b.desktop.copy(Array("B's own".utf8))
        #expect(eventually { try b.history().contains("B's own") }, "\(b.log)")
        try a.desktop.copy(Array("copied while B was away".utf8))
        #expect(eventually { a.log.contains("pushed 1") }, "\(a.log)")
        let copied = Monotonic.seconds()
        #expect(eventually { Monotonic.seconds() - copied > 1.5 })
        try b.startSync()
        #expect(eventually { b.follower.stderr.contains("did not follow") }, "\(b.log)")
        #expect(b.follower.stderr.contains("more than clipboard.followWindow (1 s)"), "\(b.log)")
        #expect(try b.history().contains("copied while B was away"))
        #expect(try b.pasted() == "B's own")
    }
}
