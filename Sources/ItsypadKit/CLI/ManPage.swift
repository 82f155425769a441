import ItsypadModel
import ItsypadSupport

/// man(7) pages generated from the command table: `itsypad.1` and one page per
/// visible top-level command (`itsypad-clip.1` covers every `clip` subcommand).
/// The prose the table has no place for (exit status, environment, files,
/// JSON fields, settings) is kept in the small tables at the end of this file.
public enum ManPage {
    /// The date every page carries in `.TH`: fixed, so that regenerating the
    /// pages changes nothing unless the table does. Bump it with a release.
    static let date = "2026-11-21"

    /// Every generated page as (file name, roff source), itsypad.1 first.
    public static func pages(root: CommandSpec) -> [(name: String, text: String)] {
        ([[root]] + root.visibleSubcommands.map { [root, $0] }).map { path in
            (name: path.map(\.name).joined(separator: "-") + ".1", text: generate(path: path))
        }
    }

    /// The page for `path`: `[root]` for the overview page, `[root, command]`
    /// for a command's page.
    public static func generate(path: [CommandSpec]) -> String {
        let root = path[0]
        let command = path[path.count - 1]
        let isRoot = path.count == 1
        let title = path.map(\.name).joined(separator: "-")
        var page = Roff()
        page.line(#".\" Generated from the command table by ManPage.swift; regenerate with ITSYPAD_REGENERATE=1 swift test."#)
        page.line(".TH \(Roff.code(title.uppercased())) 1 \(date) \"\(root.name) \(Itsypad.version)\" \"User Commands\"")

        page.section("NAME")
        page.line(Roff.code(title) + " \\- " + Roff.prose(summary(command.abstract)))

        page.section("SYNOPSIS")
        // One line per command that runs something: a group like "tab" only leads to its subcommands.
        let synopses = isRoot ? [path] : commandPaths(path).filter { $0.last!.action != nil || $0.last!.visibleSubcommands.isEmpty }
        for (index, synopsisPath) in synopses.enumerated() {
            if index > 0 { page.line(".br") }
            page.line(synopsis(synopsisPath))
        }

        page.section("DESCRIPTION")
        page.paragraph(command.abstract)
        command.discussion.map { page.paragraph($0) }
        Prose.description[isRoot ? "" : command.name]?.forEach { page.paragraph($0) }

        if !command.arguments.isEmpty {
            page.section("ARGUMENTS")
            command.arguments.forEach { page.item(argumentLabel($0), $0.help) }
        }

        if isRoot || !command.options.isEmpty {
            page.section("OPTIONS")
            command.options.forEach { page.item(optionLabel($0), $0.help) }
        }
        if !isRoot {
            if command.options.isEmpty { page.section("OPTIONS") } else { page.line(".PP") }
            page.line(
                Roff.prose("Every command also takes the global options of ") + reference(root.name, 1) + ": "
                    + root.options.filter(\.isGlobal).map { "\\fB\\-\\-\(Roff.code($0.long))\\fR" }.joined(separator: ", ") + ".")
        }

        commands(path, into: &page)
        if isRoot {
            page.section("JSON OUTPUT")
            Prose.json.forEach { page.paragraph($0) }
        }
        if command.name == "settings" { settings(into: &page) }
        // The overview keeps its own examples; a command's page gathers its subcommands'.
        examples(isRoot ? root.examples : commandPaths(path).flatMap(\.last!.examples), into: &page)

        page.section("EXIT STATUS")
        Prose.exitStatus.forEach { page.item("\\fB\($0.code)\\fR", $0.meaning) }
        if isRoot {
            page.section("ENVIRONMENT")
            Prose.environment.forEach { page.item("\\fB\(Roff.code($0.name))\\fR", $0.meaning) }
            page.section("FILES")
            page.paragraph(
                "The data directory (see ENVIRONMENT) is created with mode 0700; when other users can read or write it, every command warns once on standard error. itsypad reads it as untrusted: it follows no symlink inside it and opens no FIFO or device there. It holds:"
            )
            Prose.files.forEach { page.item("\\fI\(Roff.code($0.path))\\fR", $0.meaning) }
        }

        page.section("SEE ALSO")
        let seeAlso =
            isRoot
            ? root.visibleSubcommands.map { (root.name + "-" + $0.name, 1) } + [(root.name + "-backend", 5)]
            : [(root.name, 1), (root.name + "-backend", 5)]
        page.line(seeAlso.map { reference($0.0, $0.1) }.joined(separator: ",\n"))
        return page.text
    }

    /// The overview lists the top-level commands; a command's page details its subcommands.
    private static func commands(_ path: [CommandSpec], into page: inout Roff) {
        let root = path[0]
        if path.count == 1 {
            page.section("COMMANDS")
            for command in root.visibleSubcommands {
                page.item("\\fB\(Roff.code(command.name))\\fR", command.abstract)
                page.line("See " + reference(root.name + "-" + command.name, 1) + ".")
            }
        } else if !path[path.count - 1].visibleSubcommands.isEmpty {
            page.section("COMMANDS")
            commandPaths(path).dropFirst().forEach { subcommand($0, into: &page) }
        }
    }

    /// Every setting with its scope, type and default.
    private static func settings(into page: inout Roff) {
        page.section("SETTINGS")
        for setting in Settings.all {
            var facts = [setting.scope == .synced ? "synced" : "this device only", setting.kind.summary]
            switch setting.defaultValue {
            case .list(let items)? where items.isEmpty: facts.append("default: none")
            case let value?: facts.append("default: \(value)")
            case nil: break
            }
            page.item("\\fB\(Roff.code(setting.key))\\fR", setting.help + " (" + facts.joined(separator: "; ") + ")")
        }
    }

    private static func examples(_ examples: [Example], into page: inout Roff) {
        guard !examples.isEmpty else { return }
        page.section("EXAMPLES")
        for example in examples {
            page.paragraph(example.explanation.hasSuffix(".") ? String(example.explanation.dropLast()) + ":" : example.explanation)
            for line in [".RS 4", ".EX", Roff.code(example.command), ".EE", ".RE"] { page.line(line) }
        }
    }

    /// A subcommand's part of its command's page.
    private static func subcommand(_ path: [CommandSpec], into page: inout Roff) {
        let command = path[path.count - 1]
        page.subsection(Roff.code(path.map(\.name).joined(separator: " ")))
        page.line(synopsis(path))
        page.paragraph(command.abstract)
        if !command.aliases.isEmpty {
            page.paragraph(
                "Also run as " + command.aliases.map { (path.dropLast().map(\.name) + [$0]).joined(separator: " ") }.joined(separator: ", ")
                    + ".")
        }
        command.discussion.map { page.paragraph($0) }
        command.arguments.forEach { page.item(argumentLabel($0), $0.help) }
        command.options.forEach { page.item(optionLabel($0), $0.help) }
    }

    /// `path` and every visible command under it, parents first.
    private static func commandPaths(_ path: [CommandSpec]) -> [[CommandSpec]] {
        [path] + path[path.count - 1].visibleSubcommands.flatMap { commandPaths(path + [$0]) }
    }

    /// "itsypad clip ls [--limit n] ..." in roff.
    private static func synopsis(_ path: [CommandSpec]) -> String {
        let command = path[path.count - 1]
        var words = ["\\fB\(Roff.code(path.map(\.name).joined(separator: " ")))\\fR"]
        // --help and --version are in every page's OPTIONS; listing them would hide the useful ones.
        for option in command.options where option.long != "help" && option.long != "version" {
            let value = option.valueName.map { " \\fI\(Roff.code($0.lowercased()))\\fR" } ?? ""
            words.append("[\\fB\\-\\-\(Roff.code(option.long))\\fR\(value)]")
        }
        for argument in command.arguments {
            let name = "\\fI\(Roff.code(argument.name))\\fR"
            switch argument.arity {
            case .required: words.append(name)
            case .optional: words.append("[\(name)]")
            case .variadic: words.append("[\(name) ...]")
            case .requiredVariadic: words.append("\(name) ...")
            }
        }
        if !command.visibleSubcommands.isEmpty {
            words.append(command.action == nil ? "\\fIcommand\\fR" : "[\\fIcommand\\fR]")
            if path.count == 1 { words.append("[\\fIargument\\fR ...]") }
        }
        return words.joined(separator: " ")
    }

    /// "itsypad-tab(1)", never hyphenated across lines.
    static func reference(_ page: String, _ section: Int) -> String {
        "\\fB\\%\(Roff.code(page))\\fR(\(section))"
    }

    private static func optionLabel(_ option: OptionSpec) -> String {
        let names = (option.short.map { ["\\fB\\-\(Roff.code(String($0)))\\fR"] } ?? []) + ["\\fB\\-\\-\(Roff.code(option.long))\\fR"]
        return names.joined(separator: ", ") + (option.valueName.map { " \\fI\(Roff.code($0.lowercased()))\\fR" } ?? "")
    }

    private static func argumentLabel(_ argument: ArgumentSpec) -> String {
        "\\fI\(Roff.code(argument.name))\\fR" + (argument.isVariadic ? " ..." : "")
    }

    /// An abstract as NAME wants it: lower-case start, no final period.
    private static func summary(_ abstract: String) -> String {
        let trimmed = abstract.hasSuffix(".") ? String(abstract.dropLast()) : abstract
        return trimmed.prefix(1).lowercased() + trimmed.dropFirst()
    }
}

/// A roff document being written, and escaping for man(7).
struct Roff {
    private(set) var text = ""
    /// Right after a heading, where a paragraph macro is redundant (mandoc warns).
    private var atHeading = false

    mutating func line(_ line: String) {
        text += line + "\n"
        atHeading = false
    }

    mutating func section(_ title: String) {
        line(".SH \"\(title)\"")
        atHeading = true
    }

    mutating func subsection(_ title: String) {
        line(".SS \"\(title)\"")
        atHeading = true
    }

    /// A paragraph of prose; newlines in it start new paragraphs.
    mutating func paragraph(_ prose: String) {
        for part in prose.split(separator: "\n") {
            if !atHeading { line(".PP") }
            line(Roff.prose(String(part)))
        }
    }

    /// A tagged paragraph: `label` (already roff) hanging over `prose`.
    mutating func item(_ label: String, _ prose: String) {
        line(".TP")
        line(label)
        line(Roff.prose(prose))
    }

    /// Literal text (a command, an option, a path): every `-` is a minus sign,
    /// so that it can be copied from the rendered page.
    static func code(_ text: String) -> String {
        guardLineStart(text.map { $0 == "-" ? "\\-" : character($0) }.joined())
    }

    /// Running text: a `-` is a minus sign where it starts a word ("--name",
    /// "-") and in the rest of that word ("--data-dir"), a hyphen elsewhere.
    static func prose(_ text: String) -> String {
        var result = ""
        var inOption = false
        var previous: Character = " "
        for character in text {
            if character == "-" {
                inOption = inOption || !(previous.isLetter || previous.isNumber)
                result += inOption ? "\\-" : "-"
            } else {
                if !(character.isLetter || character.isNumber) { inOption = false }
                result += self.character(character)
            }
            previous = character
        }
        return guardLineStart(result)
    }

    /// One character, with backslashes and non-ASCII characters escaped
    /// (groff reads Latin-1 unless told otherwise).
    private static func character(_ character: Character) -> String {
        if character == "\\" { return "\\e" }
        if character.isASCII { return String(character) }
        return character.unicodeScalars.map { scalar in
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
        }.joined()
    }

    /// A text line starting with "." or "'" would be read as a request.
    private static func guardLineStart(_ text: String) -> String {
        text.hasPrefix(".") || text.hasPrefix("'") ? "\\&" + text : text
    }
}

/// The hand-written parts of the pages.
private enum Prose {
    /// Extra DESCRIPTION paragraphs by top-level command ("" for itsypad(1)).
    static let description: [String: [String]] = [
        "": [
            "Tabs and clipboard entries are named by ids: the commands that create them print the full id, and lists show the first 8 characters. Any unique prefix of 4 or more characters selects an item; a tab can also be named by its exact name.",
            "Data goes to standard output and messages to standard error. Messages meant for a person are printed only when standard error is a terminal and --quiet is not given, so that cron mails only failures. So is the progress of long work (an import, a sync that sends or receives many records, a key rotation): one line, records (or megabytes) done of the total, the rate and the time left, redrawn in place at most ten times a second and erased when done; sync watch prints one line per sync instead. The --json forms are stable (fields are only ever added at the end); the human forms may change.",
            "Every command holds the data directory's lock while it runs; another itsypad waits for it up to ITSYPAD_LOCK_TIMEOUT seconds, then exits 75. sync status does not wait for a running sync: it reads what is stored and names the sync's process.",
            "Changes to tabs, clipboard entries and synced settings are queued for the sync backend, a directory shared by your devices (the sync.backend setting); its format is described in itsypad-backend(5). Clips marked local, clips matching clipboard.ignore, clips that look like secrets and file-backed tabs never leave the device.",
        ],
        "tab": [
            "A tab has an id, a name, content and a language. Its language is detected from the content until it is set with --language, which locks it; --auto-language unlocks it again. A tab created with --file keeps its content in that file and never syncs."
        ],
        "clip": [
            "The history is kept newest first. Pinned entries are never pruned, evicted or cleared, except by clear --all. Entries added with --local, entries matching the clipboard.ignore patterns and, with clipboard.ignoreSecrets, entries that look like private keys or API tokens are kept on this device only."
        ],
        "settings": [
            "Without a subcommand, settings lists every setting, as settings list does. The settings and their values are listed under SETTINGS."
        ],
        "sync": [
            "Every device names the same backend: a directory (see itsypad-backend(5)), a git remote (git:URL) or an rclone remote (rclone:REMOTE:PATH; see sync enable); sync enable records it in the sync.backend setting and turns sync.enabled on. Changes made while sync is off are still queued and go with the next sync.",
            "A tab edited on two devices is merged three ways against the last synced version. Where both changed the same lines, the newer edit wins the tab and the other is kept as a new tab named \"NAME (conflict DEVICE TIME)\". The name and the language each follow the edit that set them last. An edit (of the content, name, language or a lock) beats a deletion made elsewhere by a device that had not seen it. While a local pin or unpin waits to be sent, an entry pinned on either side stays pinned. A setting keeps its newest value.",
        ],
        "export": [
            "The document is an object with the fields format (\"itsypad-export\"), version (1), exportedAt, tabs, clips and settings; tabs and clips have the fields of their --json forms (see itsypad(1)), clips followed by localReason (why one stays on this device, or null) and data (a binary entry's bytes in base64, null for text), and the settings are objects with key, value and clock. itsypad import reads it back."
        ],
        "import": [
            "Nothing is imported when any item in the file is invalid."
        ],
    ]

    static let json: [String] = [
        "tab ls --json prints an array of tabs and tab show --json one tab, as objects with the fields id, name, content, language, languageLocked (true or false), lastModified (ISO 8601), fileURL (the backing file or null) and syncState (synced, pending, failed or localOnly).",
        "clip ls --json prints an array of entries, as objects with the fields id, text (null for an image or other binary entry), timestamp (ISO 8601), pinned, localOnly, syncState, type (the MIME type, text/plain for text) and size (in bytes).",
        "settings list --json prints an array of objects with the fields key, value (null when unset), scope (synced or device) and isDefault.",
        "sync status --json prints one object with the fields enabled, backend, deviceID, deviceName, lastPush and lastPull (ISO 8601 or null), pending (counts by record type: ScratchTab, ClipboardEntry, Setting), failed (objects with type, id, attempts and error), localOnly (a count), lastError, localOnlyReasons (counts by reason: local, ignored, secret, oversized and large clips, fileBacked tabs), syncing (null, or the pid and since of the sync under way), quarantined (what the backend holds malformed, skipped until it is fixed: objects with type and id, both null when no record can be named, location, reason, and since in milliseconds since 1970) remote (null unless the backend is a git remote: an object with lastFetch and lastPush, ISO 8601 or null, unpushedCommits, and lastError, git's last error or null) and waiting (backend files not replicated completely yet, synced once they arrive: objects with path, reason, and since in milliseconds since 1970). localOnly and localOnlyReasons are null while a running sync rewrites the clipboard index.",
        "sync log --json prints an array of attempts, as objects with the fields time, direction (sync, push or pull), pulled, pushed, conflicts, result, error and quarantined (what that attempt skipped as malformed, each as location: reason).",
    ]

    static let exitStatus: [(code: Int32, meaning: String)] = [
        (ExitCode.success, "Success."),
        (
            ExitCode.failure,
            "The command failed: no such item, invalid input, a corrupt or newer data directory, a full disk, something malformed on the sync backend (a symlink, FIFO or damaged file; retrying will not help)."
        ),
        (ExitCode.usage, "Usage error: an unknown command or option, a missing or invalid argument."),
        (
            ExitCode.temporary,
            "Temporary failure: the data directory is locked by another itsypad, or the sync backend is locked, unreachable or missing (is its disk mounted?). Try again later."
        ),
        (ExitCode.interrupted, "Interrupted (SIGINT)."),
    ]

    static let environment: [(name: String, meaning: String)] = [
        ("ITSYPAD_DATA_DIR", "The data directory, unless --data-dir is given."),
        ("XDG_DATA_HOME", "Without ITSYPAD_DATA_DIR, the data directory is $XDG_DATA_HOME/itsypad (an absolute path only)."),
        ("HOME", "Without either, the data directory is ~/.local/share/itsypad."),
        ("VISUAL", "The editor for tab new and tab edit on a terminal, unless the editor setting is set."),
        ("EDITOR", "The editor when VISUAL is not set; vi when neither is."),
        ("TMPDIR", "Where the editor's temporary file is made (default: /tmp)."),
        ("COLUMNS", "The width help is wrapped to (default: the terminal's width, else 80)."),
        ("NO_COLOR", "When set, error messages are not coloured. They never are when standard error is not a terminal or TERM is dumb."),
        (
            "CLIPBOARD_STATE",
            "Set by wl-clipboard 2.2 and later for the command wl-paste --watch runs: clip add stores nothing when it is sensitive (a password manager's clip), clear or nil."
        ),
        ("ITSYPAD_LOCK_TIMEOUT", "Seconds to wait for another itsypad to release the data directory before exiting 75 (default: 10)."),
        (
            "ITSYPAD_GIT_TIMEOUT",
            "Seconds one git command of a sync through a git remote may take before it is killed and the sync exits 75 (default: 120)."
        ),
        ("PREFIX", "Where install and uninstall put and remove files, unless --prefix is given (default: ~/.local)."),
    ]

    static let files: [(path: String, meaning: String)] = [
        ("meta.json", "The directory's format version, this device's id and the creation time."),
        ("lock", "Locked (flock) by every itsypad command while it runs."),
        (
            "tabs/<id>.json",
            "One file per tab, replaced atomically on every change. A synced tab removed here leaves, in place of its file, the record of its removal until that reaches the sync backend. Each write gives the file a new random stamp, which sync/tab-tags names."
        ),
        (
            "tabs/index",
            "A cache of every tab's id, name and tab ls row, so that a lookup or a listing need not read every tab file; rebuilt from the tab files whenever they disagree (safe to delete)."
        ),
        ("clips/log", "The clipboard history: an append-only log, one JSON object a line; compacted when dead lines outnumber live ones."),
        ("clips/index", "A binary index of the log, sorted by time; a cache rebuilt whenever it does not match the log."),
        ("settings.json", "Stored settings, each with the clock of its last change."),
        (
            "sync/pending.log",
            "The queue of changes waiting to be sent to the sync backend: an append-only log, one JSON object a line. If it is lost or damaged, sync says so, keeps a damaged copy, and queues again whatever differs from the last synced versions."
        ),
        (
            "sync/pending.keys",
            "A checksummed summary of which records wait in sync/pending.log, so that a listing need not replay the whole queue; ignored and rewritten whenever it does not match the log."
        ),
        (
            "sync/clips.log",
            "What sync knows of each clipboard entry on the backend (change tag, pinned state, pin history), one JSON object a line."
        ),
        (
            "sync/tab-tags",
            "The change tags this device's pushes were accepted with, kept out of the tab files so that a push writes no tab file: one JSON object a line ({\"id\",\"stamp\",\"tag\",\"clock\"}, and \"ancestor\" when the file holds other content than the version sent), sorted by id, rewritten atomically when a push ends. An entry is a tab's sync state only while the tab's file holds the stamp it names: a tab written again carries its own. If it is lost or damaged, nothing is: the tabs it named look never synced, are sent again without a tag, and come back as the backend's own version. Versions before it ignore it and the stamps, with the same effect (traffic, no loss)."
        ),
        (
            "sync/tab-tags.log",
            "The entries of sync/tab-tags appended since it was last rewritten, made durable with one fdatasync a step of a push; merged into it when the push ends or the log grows past a quarter of it."
        ),
        (
            "sync/state.json",
            "What sync remembers between runs: the backend's zone, the change token, the last push and pull, the items that keep failing, the queue's identity, and what is quarantined. If it is damaged, the next sync starts over: it fetches everything and sends everything again."
        ),
        (
            "sync/running.json",
            "The process id and start time of the sync under way, removed when it ends; a note left by a killed sync is ignored."
        ),
        ("sync/log.jsonl", "The activity log of sync attempts, one JSON object a line (the newest 500)."),
        (
            "sync/watch.lock",
            "Locked (flock) by a running sync watch for its whole life, so that a second one for the same directory is refused; never locked by anything else."
        ),
        (
            "sync/git/",
            "With a git remote as backend: its clone (repository/, the git directory; backend/, the working tree the engine syncs with, a backend directory as itsypad-backend(5) describes) and status.json (the last fetch and push and git's last error). Commits that could not be put on top of a rewritten remote are kept under refs/itsypad/kept. Removing the whole directory is safe once sync status shows nothing waiting: the next sync clones again."
        ),
        (
            "sync/rclone/",
            "With an rclone remote as backend: its mirror (backend/, the backend directory the engine syncs with), manifest (what the mirror and the remote held of each file when they were last in step), status.json (the last fetch and send and rclone's last error), and incoming/ and transfer-list while a transfer runs. Removing the whole directory is safe once sync status shows nothing waiting: the next sync downloads the backend again."
        ),
    ]
}
