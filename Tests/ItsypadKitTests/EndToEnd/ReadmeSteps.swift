import Testing

@testable import ItsypadCLI
@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// How each marked README block is run, and what it must print. A block runs
/// verbatim; where its marker says it needs the network, a desktop or another
/// machine, the step sets up the stand-in the marker names and nothing else.
struct ReadmeSteps {
    let account: ReadmeAccount
    /// A second machine, for the blocks a user runs elsewhere.
    let otherMachine: ReadmeAccount
    /// The recovery key the encryption block printed.
    var recoveryKey = ""

    /// Runs the block marked `name`; false when no step knows that name.
    mutating func run(_ name: String, _ block: ReadmeBlock) throws -> Bool {
        let at = "README.md line \(block.line) (\(name))"
        switch name {
        case "setup": try setup(block, at)
        case "zsh-fpath", "zsh-zfunc": try zshFindsCompletion(block, at)
        case "bash-source": try bashCompletes(block, at)
        case "tour": try tour(block, at)
        case "kvs": try keyValueImport(block, at)
        case "walkthrough": try walkthrough(block, at)
        case "encrypt": try encrypt(block, at)
        case "join": try join(block, at)
        case "rotate": try rotate(block, at)
        case "git-walkthrough": try gitWalkthrough(block, at)
        case "rclone-walkthrough": try rcloneWalkthrough(block, at)
        case "watch": try watch(block, at)
        case "systemd": try systemd(block, at, unit: SystemdUnit.syncWatchName)
        case "clip-systemd": try systemd(block, at, unit: SystemdUnit.clipWatchName)
        case "desktop": try desktop(block, at)
        case "follow": try follow(block, at)
        case "osc52": try osc52(block, at)
        case "cron": try cron(block, at)
        case "recipes": try recipes(block, at)
        case "peers": try peers(block, at)
        default: return false
        }
        return true
    }

    /// `swift test` cannot build a release inside itself (SwiftPM holds `.build`),
    /// so the install half runs in a checkout whose release binary is the one this
    /// test run built; `SetupTests` checks the build half word for word.
    func setup(_ block: ReadmeBlock, _ at: String) throws {
        #expect(block.lines == [SetupTests.build + " && " + SetupTests.install, "swift test"], "\(at)")
        let checkout = try SetupTests.checkout()
        let installed = try account.run(SetupTests.install, in: checkout.path)
        #expect(installed.status == 0, "\(at): \(installed.stderr)")
        #expect(FileSystem.exists(account.home.path + "/.local/bin/itsypad"), "\(at): nothing installed")
    }

    func zshFindsCompletion(_ block: ReadmeBlock, _ at: String) throws {
        let result = try account.run(
            block.text + #"autoload -Uz compinit && compinit -u -D && print -r -- $_comps[itsypad]"#, shell: "zsh")
        #expect(result.stdout == "_itsypad\n", "\(at): \(result.stdout)\(result.stderr)")
    }

    func bashCompletes(_ block: ReadmeBlock, _ at: String) throws {
        let result = try account.run(
            // bash runs completion functions without -e, as in an interactive shell.
            block.text + #"set +e; COMP_WORDS=(itsypad cl); COMP_CWORD=1; _itsypad; printf '%s\n' "${COMPREPLY[@]}""#)
        #expect(result.stdout == "clip\n", "\(at): \(result.stdout)\(result.stderr)")
    }

    /// The network stand-in: `curl` prints a local page.
    func tour(_ block: ReadmeBlock, _ at: String) throws {
        let curl = "curl() { printf '<!doctype html>\\n<html><body><h1>Example Domain</h1></body></html>\\n'; }\n"
        let result = try account.run(curl + block.text)
        #expect(result.status == 0, "\(at): \(result.stderr)")
        #expect(result.stdout.contains("\tnotes.md\tmarkdown\t"), "\(at): \(result.stdout)")
        #expect(result.stdout.contains("\thello\n"), "\(at): clip ls should list hello: \(result.stdout)")
        #expect(result.stdout.contains("clipboard.maxEntries=1000\n"), "\(at): \(result.stdout)")
        #expect(account.read("page.html")?.contains("Example Domain") == true, "\(at)")
        let copy = try account.run("itsypad --data-dir ~/itsypad-copy tab ls")
        #expect(copy.stdout.contains("\tbuy milk\t"), "\(at): the import did not bring the tabs: \(copy.stdout)\(copy.stderr)")
    }

    /// Needs a Mac: a stand-in property list holds a tab and a clip as the app stored them.
    func keyValueImport(_ block: ReadmeBlock, _ at: String) throws {
        let tab =
            #"[{"id":"9F0D3C1A-8D2B-4C4E-9A1F-2B7E6C5D4A3B","name":"from the mac","content":"typed on the Mac","language":"plain","lastModified":786000000}]"#
        let clip = #"[{"id":"1E2D3C4B-5A69-4788-9A0B-C1D2E3F4A5B6","text":"copied on the Mac","timestamp":786000000}]"#
        let made = try account.run(
            """
            mkdir -p ~/Library/SyncedPreferences
            python3 -c 'import plistlib, sys
            plistlib.dump({"values": {"tabs": sys.argv[1].encode(), "clipboard": sys.argv[2].encode(), "deletedTabIDs": b"[]"}},
                          open(sys.argv[3], "wb"), fmt=plistlib.FMT_BINARY)' '\(tab)' '\(clip)' ~/Library/SyncedPreferences/com.nickustinov.itsypad.plist
            """)
        try #require(made.status == 0, "\(at): \(made.stderr)")
        let result = try account.run(block.text + "itsypad tab show 'from the mac'\nitsypad clip ls\n")
        #expect(result.status == 0, "\(at): \(result.stderr)")
        #expect(result.stdout.hasPrefix("typed on the Mac"), "\(at): \(result.stdout)")
        #expect(result.stdout.contains("\tcopied on the Mac\n"), "\(at): \(result.stdout)")
    }

    /// Runs `block` as pasted, expecting it to succeed.
    func ranWell(_ block: ReadmeBlock, _ at: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> RunResult {
        let result = try account.run(block.text)
        #expect(result.status == 0, "\(at): \(result.stderr)", sourceLocation: sourceLocation)
        return result
    }

    func walkthrough(_ block: ReadmeBlock, _ at: String) throws {
        let result = try ranWell(block, at)
        #expect(result.stdout.contains("WRITE THE REPORT\ncall mum\nbook the 9:00 train"), "\(at)")
        #expect(result.stdout.contains("todo (conflict laptop "), "\(at): \(result.stdout)")
        #expect(result.stdout.contains("pending:    0 tabs, 0 clips, 0 settings"), "\(at)")
    }

    /// Syncthing would have made ~/Sync, the folder it shares.
    mutating func encrypt(_ block: ReadmeBlock, _ at: String) throws {
        try FileSystem.makeDirectory(account.home.path + "/Sync")
        let result = try ranWell(block, at)
        recoveryKey = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(recoveryKey.split(separator: "-").count == 13, "\(at): no recovery key in \(result.stdout)")
    }

    /// Another machine: Syncthing's part is a copy of ~/Sync; the user types the key.
    func join(_ block: ReadmeBlock, _ at: String) throws {
        let copied = try Process.run("/bin/cp", ["-a", account.home.path + "/Sync", otherMachine.home.path + "/Sync"])
        try #require(copied.status == 0, "\(copied.stderr)")
        let installed = try Process.run("/bin/cp", ["-a", account.home.path + "/.local", otherMachine.home.path + "/.local"])
        try #require(installed.status == 0, "\(installed.stderr)")
        let result = try otherMachine.run(block.text, stdin: recoveryKey + "\n")
        #expect(result.status == 0, "\(at): \(result.stderr)")
        let tabs = try otherMachine.run("itsypad tab ls")
        #expect(tabs.stdout.contains("\tbuy milk\t"), "\(at): the other machine did not get the tour's tabs: \(tabs.stdout)")
    }

    func rotate(_ block: ReadmeBlock, _ at: String) throws {
        let result = try ranWell(block, at)
        let key = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(key.split(separator: "-").count == 13 && key != recoveryKey, "\(at): \(result.stdout)")
    }

    func gitWalkthrough(_ block: ReadmeBlock, _ at: String) throws {
        let result = try ranWell(block, at)
        #expect(result.stdout.contains("copied on the laptop"), "\(at)")
        #expect(result.stdout.contains("buy milk"), "\(at)")
        #expect(result.stdout.contains("remote:     fetched 20"), "\(at)")
        // The README's claims: commits name devices by id, and a sync that only pulled commits too.
        let subjects = result.stdout.split(separator: "\n").filter { $0.hasPrefix("itsypad sync") }
        #expect(subjects.count >= 4, "\(at): \(result.stdout)")
        for subject in subjects {
            let device = subject.split(separator: " on ", maxSplits: 1).last?.prefix(36) ?? ""
            #expect(Identifier.isValid(String(device)), "\(at): a commit names no device id: \(subject)")
        }
        #expect(subjects.contains { $0.contains("pulled 1, pushed 0") }, "\(at): no commit of a sync that only pulled: \(subjects)")
    }

    /// Runs as pasted: the block starts its own WebDAV server on 127.0.0.1 and stops it.
    func rcloneWalkthrough(_ block: ReadmeBlock, _ at: String) throws {
        let result = try account.run(block.text)
        #expect(result.status == 0, "\(at): \(result.stderr)")
        #expect(result.stdout.contains("copied on the laptop"), "\(at)")
        #expect(result.stdout.contains("remote:     fetched 20"), "\(at): \(result.stdout)")
    }

    /// The watcher is the background job itself, so `kill $!` stops it and `wait` gives its status.
    func watch(_ block: ReadmeBlock, _ at: String) throws {
        let result = try ranWell(block, at)
        #expect(result.stderr.contains("watching "), "\(at): \(result.stderr)")
    }

    /// Needs a systemd user session: systemctl and journalctl are stand-ins that
    /// record their arguments; the unit must start the installed binary.
    func systemd(_ block: ReadmeBlock, _ at: String, unit name: String) throws {
        try account.writeStandIn("systemctl", "echo \"systemctl $*\" >> \"$HOME/stand-ins.log\"\n")
        try account.writeStandIn("journalctl", "echo \"journalctl $*\" >> \"$HOME/stand-ins.log\"\n")
        let result = try account.run(block.text, in: GeneratedFiles.root, path: account.standIns)
        #expect(result.status == 0, "\(at): \(result.stderr)")
        #expect(account.read("stand-ins.log")?.contains("systemctl --user enable --now \(name)") == true, "\(at)")
        // Copied by the user, or installed by `itsypad install` where systemd looks for ~/.local.
        let unit = try #require(
            account.read(".config/systemd/user/" + name) ?? account.read(".local/share/systemd/user/" + name),
            "\(at): no unit where systemd looks")
        let start = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let program = String(start.dropFirst("ExecStart=".count).split(separator: " ")[0]).replacing("%h", with: account.home.path)
        #expect(access(program, X_OK) == 0, "\(at): the unit starts \(program), which install did not put there")
    }

    /// Each line's command as cron runs it: sh, HOME set, PATH=/usr/bin:/bin, no
    /// terminal; quiet on success, so cron mails nothing.
    func cron(_ block: ReadmeBlock, _ at: String) throws {
        #expect(!block.lines.isEmpty, "\(at)")
        for line in block.lines {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            try #require(fields.count == 6, "\(at): not a crontab line: \(line)")
            let command = String(fields[5])
            let result = try Process.run(
                "/usr/bin/env", ["-i", "HOME=" + account.home.path, "PATH=/usr/bin:/bin", "/bin/sh", "-c", command])
            #expect(result.status == 0, "\(at): '\(command)' exits \(result.status) under cron: \(result.stderr)")
            #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(at): cron would mail: \(result.stdout)\(result.stderr)")
        }
    }

    /// Needs a desktop: a headless sway, whose clipboard then holds the entry
    /// picked (fzf picks the first line, as Enter does). A loaded machine may take
    /// longer than the block's `sleep 1` to record the copy: the watcher starts two
    /// seconds late here, as it might there, and the stand-in for `sleep` waits until
    /// the copy is recorded (a test waits for a condition, never a fixed time).
    func desktop(_ block: ReadmeBlock, _ at: String) throws {
        let session = try DesktopSession(.wayland)
        try account.writeStandIn("fzf", "head -n 1\n")
        try account.writeStandIn(
            "itsypad", "[ \"$1 $2\" = 'clip watch' ] && /bin/sleep 2\nexec \"$HOME/.local/bin/itsypad\" \"$@\"\n")
        try account.writeStandIn(
            "sleep",
            "for i in $(seq 1200); do itsypad clip ls -n 1 | grep -q 'copied on Wayland' && exit 0; /bin/sleep 0.1; done\nexit 1\n")
        defer { for name in ["itsypad", "sleep"] { unlink(account.standIns + "/" + name) } }
        let exports = session.environment.map { "export \($0.key)='\($0.value)'\n" }.joined()
        let result = try account.run(exports + block.text, path: account.standIns)
        #expect(result.status == 0, "\(at): \(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("\tcopied on Wayland\n"), "\(at): \(result.stdout)\(result.stderr)")
        #expect(try session.paste().content == Array("copied on Wayland".utf8), "\(at): clip copy did not put it back")
    }

    /// Needs a systemd user session: systemctl records its arguments; the setting must be on.
    func follow(_ block: ReadmeBlock, _ at: String) throws {
        try account.writeStandIn("systemctl", "echo \"systemctl $*\" >> \"$HOME/stand-ins.log\"\n")
        let result = try account.run(block.text, path: account.standIns)
        #expect(result.status == 0, "\(at): \(result.stderr)")
        let started = "systemctl --user enable --now \(SystemdUnit.syncWatchName) \(SystemdUnit.clipWatchName)"
        #expect(account.read("stand-ins.log")?.contains(started) == true, "\(at)")
        #expect(try account.run("itsypad settings get clipboard.follow").stdout == "true\n", "\(at)")
    }

    /// As on a host reached by ssh: no desktop, a pseudo-terminal (python3's pty) as the controlling
    /// terminal, fzf a stand-in that picks the first line. The terminal must get the newest entry by OSC 52.
    func osc52(_ block: ReadmeBlock, _ at: String) throws {
        try account.writeStandIn("fzf", "head -n 1\n")
        defer { unlink(account.standIns + "/fzf") }
        try account.run("itsypad clip add 'copied over ssh'")
        let script = account.home.path + "/osc52.sh", terminal = account.home.path + "/terminal"
        try FileSystem.writeAtomically(script, Array(block.text.utf8))
        let result = try account.run(
            "/usr/bin/python3 '\(TerminalClipboardTests.ptyRun)' '\(terminal)' /bin/bash --norc --noprofile -e '\(script)'",
            path: account.standIns)
        #expect(result.status == 0, "\(at): \(result.stderr)")
        #expect(try FileSystem.read(terminal) == TerminalClipboardTests.osc52("copied over ssh"), "\(at)")
    }

    /// Needs a desktop: wl-paste reports two copies, clipnotify two changes,
    /// and xclip -o holds a text.
    func recipes(_ block: ReadmeBlock, _ at: String) throws {
        try account.writeStandIn(
            "wl-paste", "[ \"$1\" = --watch ] && shift\nfor t in 'first copy' 'second copy'; do printf %s \"$t\" | \"$@\"; done\n")
        try account.writeStandIn(
            "clipnotify",
            "n=$(cat \"$HOME/.clipnotify\" 2>/dev/null || echo 0)\necho $((n + 1)) > \"$HOME/.clipnotify\"\n[ \"$n\" -lt 2 ]\n")
        try account.writeStandIn("xclip", "printf 'copied in X11'\n")
        let result = try account.run(block.text, path: account.standIns)
        #expect(result.status == 0, "\(at): \(result.stderr)")
        let listed = try account.run("itsypad clip ls -n 3")
        for text in ["copied in X11", "second copy", "first copy"] {
            #expect(listed.stdout.contains("\t" + text + "\n"), "\(at): \(text) was not recorded: \(listed.stdout)")
        }
    }

    /// clipman's file where clipman keeps it, and a copyq that prints what `CopyQHistory.script` prints.
    func peers(_ block: ReadmeBlock, _ at: String) throws {
        try FileSystem.makeDirectory(account.home.path + "/.local/share")
        try FileSystem.writeAtomically(
            account.home.path + "/.local/share/clipman.json", Array(#"["clipman's older","clipman's newer"]"#.utf8))
        let items = #"[{"types":["text/plain"],"pinned":false,"text":"ZnJvbSBDb3B5UQ=="},{"types":["image/png"],"pinned":false}]"#
        try account.writeStandIn("copyq", "[ \"$1 $2\" = 'eval --' ] && printf '%s' '{\"tab\":\"&clipboard\",\"items\":\(items)}'\n")
        let result = try account.run(block.text, path: account.standIns)
        #expect(result.status == 0, "\(at): \(result.stderr)")
        #expect(result.stderr.contains("row 1 (image/png)"), "\(at): the image is not named: \(result.stderr)")
        let listed = try account.run("itsypad clip ls -n 3").stdout.split(separator: "\n").map { $0.split(separator: "\t").last ?? "" }
        #expect(listed == ["from CopyQ", "clipman's newer", "clipman's older"], "\(at): \(listed)")
    }
}
