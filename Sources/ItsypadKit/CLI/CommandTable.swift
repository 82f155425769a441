import ItsypadModel
import ItsypadSupport

/// The one table of commands. Parsing, help, completions and man pages are all
/// generated from it.
public enum CommandTable {
    static let json = OptionSpec("json", help: "Print JSON (stable; see itsypad(1) for the fields).")
    static let languages = CompletionKind.dynamic(.languages)
    static func primary(help: String) -> OptionSpec { OptionSpec("primary", help: help) }

    public static let root = CommandSpec(
        "itsypad",
        abstract: "A scratchpad and clipboard history for the shell, synced through a shared directory or a git remote.",
        discussion: "Scratch tabs, a clipboard history and settings live in a local data directory; "
            + "'itsypad sync' keeps them the same on every machine that shares a sync backend: a directory (a USB disk, "
            + "a folder Syncthing or Dropbox replicates) or a git remote.",
        options: [
            OptionSpec(
                "data-dir", value: "DIR",
                help: "Use DIR as the data directory (default: $ITSYPAD_DATA_DIR, $XDG_DATA_HOME/itsypad or ~/.local/share/itsypad).",
                completion: .directory),
            OptionSpec("quiet", short: "q", help: "Print nothing but errors on standard error."),
            OptionSpec("version", help: "Show the version.", isGlobal: false),
            OptionSpec("help", short: "h", help: "Show help information."),
        ],
        subcommands: [tab, clip, settings, sync, exportCommand, importCommand, help, completions, install, uninstall, complete],
        examples: [
            Example("echo hello | itsypad clip add", "Add a clipboard entry from a pipe."),
            Example("itsypad clip ls | fzf | cut -f1 | itsypad clip show", "Pick an entry with fzf and print it."),
        ]
    )

    static let tab = CommandSpec(
        "tab", abstract: "Create, list, show, edit and remove scratch tabs.",
        subcommands: [
            CommandSpec(
                "new", abstract: "Create a tab and print its id.",
                discussion:
                    "The content comes from TEXT, else from standard input when it is not a terminal, else from your editor ($VISUAL, $EDITOR) on an empty file. Empty or whitespace-only input creates nothing (exit 1); pass '' as TEXT for an empty tab. Without --name the tab is named after its first line (30 characters) or \"Untitled\".\nWith --file the tab is named after the file, takes its language from the file's extension, and holds the file's content unless TEXT or piped text replaces it; edits write the file in place (through a symlink, its target), keeping its mode, owner and links.",
                arguments: [ArgumentSpec("text", .variadic, help: "The content (words are joined with spaces).")],
                options: [
                    OptionSpec("name", value: "NAME", help: "Name the tab (the name then sticks)."),
                    OptionSpec(
                        "language", value: "LANG", help: "Set and lock the language instead of detecting it.", completion: languages),
                    OptionSpec(
                        "file", value: "PATH",
                        help: "Back the tab by the existing file PATH: its content lives in that file and it never syncs.",
                        completion: .file),
                    OptionSpec("create", help: "With --file, create PATH when it does not exist."),
                ],
                examples: [
                    Example("itsypad tab new 'buy milk'", "A tab named \"buy milk\"."),
                    Example("curl -s https://example.com | itsypad tab new --name page --language html", "A tab from a pipe."),
                    Example("itsypad tab new --file ~/notes.md", "A markdown tab named notes.md, kept in that file."),
                ],
                action: TabCommands.new),
            CommandSpec(
                "ls", abstract: "List tabs, most recently modified first.",
                discussion: "One line per tab: SHORTID, NAME, LANGUAGE and LASTMODIFIED, separated by tabs.",
                options: [json], examples: [Example("itsypad tab ls", "List tabs.")], action: TabCommands.list),
            CommandSpec(
                "show", abstract: "Print a tab's content exactly as stored.",
                arguments: [
                    ArgumentSpec("tab", help: "The tab's id, unique id prefix (4+ characters) or exact name.", completion: .dynamic(.tabs))
                ],
                options: [json], examples: [Example("itsypad tab show notes > notes.txt", "Save the tab named notes.")],
                action: TabCommands.show),
            CommandSpec(
                "edit", abstract: "Change a tab's content, name or language.",
                discussion:
                    "New content comes from TEXT or piped standard input; with neither, on a terminal, your editor opens on the current content. An edit that changes nothing changes nothing.",
                arguments: [
                    ArgumentSpec("tab", help: "The tab's id, unique id prefix or exact name.", completion: .dynamic(.tabs)),
                    ArgumentSpec("text", .variadic, help: "The new content."),
                ],
                options: [
                    OptionSpec("name", value: "NAME", help: "Rename the tab."),
                    OptionSpec("language", value: "LANG", help: "Set and lock the language.", completion: languages),
                    OptionSpec("auto-language", help: "Unlock the language and detect it from the content."),
                ],
                examples: [
                    Example("itsypad tab edit notes", "Edit the tab named notes in $EDITOR."),
                    Example("date | itsypad tab edit notes", "Replace its content."),
                ],
                action: TabCommands.edit),
            CommandSpec(
                "rm", abstract: "Remove tabs.",
                arguments: [ArgumentSpec("tab", .requiredVariadic, help: "Ids, id prefixes or names.", completion: .dynamic(.tabs))],
                examples: [Example("itsypad tab rm 3f2a", "Remove the tab whose id starts with 3f2a.")],
                action: TabCommands.remove),
        ])

    static let clip = CommandSpec(
        "clip", abstract: "Keep and search a clipboard history.",
        subcommands: [
            CommandSpec(
                "add", abstract: "Add text, an image or other bytes to the clipboard history and print its id.",
                discussion:
                    "Input that is UTF-8 text is kept as text; other bytes (up to clipboard.maxBytes) are kept byte for byte as a binary entry, whose type is read from its first bytes (PNG, JPEG, GIF, WebP, BMP, TIFF, PDF; otherwise application/octet-stream) unless --type gives it. UTF-8 that starts like one of those formats and holds a NUL byte is that format, as no copied text holds a NUL. Empty input and whitespace-only text are refused (exit 1), as is invalid UTF-8 with --type text/plain. Adding what the newest entry holds again adds nothing and prints that entry's id. Binary entries larger than clipboard.maxSyncBytes stay on this device. When CLIPBOARD_STATE is sensitive (a password manager's clip, as wl-clipboard 2.2 and later tell), clear or nil, nothing is read or stored and the exit status is 0. The history keeps at most clipboard.maxEntries entries: the oldest unpinned ones are evicted.",
                arguments: [ArgumentSpec("text", .variadic, help: "The text; read from standard input when omitted.")],
                options: [
                    OptionSpec("local", help: "Never sync this entry."),
                    OptionSpec(
                        "type", value: "MIME",
                        help: "The input's MIME type (type/subtype, e.g. image/png); text/plain keeps it as text, any other as bytes."),
                ],
                examples: [
                    Example("wl-paste --watch itsypad clip add", "Record every Wayland clipboard change (clip watch does more)."),
                    Example("itsypad clip add < screenshot.png", "Add an image."),
                    Example("itsypad clip add --local \"$TOKEN\"", "Keep a secret on this machine only."),
                ],
                action: ClipCommands.add),
            CommandSpec(
                "ls", abstract: "List entries, newest first.",
                discussion:
                    "One line per entry: SHORTID, a tab, and a one-line preview (whitespace collapsed, cut with \"…\"), which starts with \"[pinned] \" for a pinned entry. A binary entry is described as [[ TYPE WIDTH×HEIGHT SIZE ]], the pixels only for an image whose header could be read; --search skips binary entries.",
                options: [
                    OptionSpec("limit", short: "n", value: "N", help: "Show at most N entries."),
                    OptionSpec("search", short: "s", value: "TEXT", help: "Only entries containing TEXT (case-insensitive)."),
                    OptionSpec("pinned", help: "Only pinned entries."),
                    json,
                ],
                examples: [
                    Example("itsypad clip ls -n 20", "The 20 newest entries."),
                    Example("itsypad clip ls | fzf | cut -f1 | itsypad clip show", "Pick one with fzf."),
                ],
                action: ClipCommands.list),
            CommandSpec(
                "show", abstract: "Print an entry's text or bytes exactly as stored.",
                discussion:
                    "Without ID the id is read from standard input when it is not a terminal; empty input (fzf left with Esc) prints nothing and exits 0, as xargs -r would.",
                arguments: [
                    ArgumentSpec("id", .optional, help: "The entry's id or unique prefix (4+ characters).", completion: .dynamic(.clips))
                ],
                examples: [
                    Example("itsypad clip show 3f2a > clip.txt", "Save an entry."),
                    Example("itsypad clip ls | fzf | cut -f1 | itsypad clip show", "Pick one with fzf and print it."),
                ],
                action: ClipCommands.show),
            CommandSpec(
                "copy", abstract: "Put an entry back on the desktop's clipboard, with its type.",
                discussion:
                    "Through wl-copy (with --type) on Wayland, when WAYLAND_DISPLAY is set, else through xclip on X11, when DISPLAY is. With neither (on a host reached by ssh), or with --osc52, a text entry is written to the controlling terminal as the OSC 52 escape, which the terminal puts on its own clipboard; inside tmux it needs 'set -g set-clipboard on', inside GNU screen it is passed on in screen's DCS strings. OSC 52 carries text of at most 74994 bytes (100000 bytes of escape, the limit hterm documents); an image, a larger entry or no controlling terminal fails (exit 1). Without ID the id is read from standard input when it is not a terminal; empty input (fzf left with Esc) copies nothing and exits 0. wl-copy and xclip leave a process serving the entry until something else is copied. Exit status 75 when the tool fails (the compositor or X server did not answer).",
                arguments: [
                    ArgumentSpec("id", .optional, help: "The entry's id or unique prefix (4+ characters).", completion: .dynamic(.clips))
                ],
                options: [
                    primary(help: "Put it on the primary selection (middle-click paste) instead."),
                    OptionSpec("osc52", help: "Write it to the terminal as OSC 52, even when there is a desktop."),
                ],
                examples: [
                    Example("itsypad clip copy 3f2a", "Copy an entry back."),
                    Example("itsypad clip ls | fzf | cut -f1 | itsypad clip copy", "Pick one with fzf and copy it back (over ssh too)."),
                ],
                action: ClipCommands.copy),
            CommandSpec(
                "watch", abstract: "Record every clipboard change until stopped.",
                discussion:
                    "Runs in the foreground (for a terminal or a systemd user service) until SIGINT, SIGTERM or SIGHUP, then exits 0. On Wayland (WAYLAND_DISPLAY set) it follows the clipboard through wl-paste --watch; on X11 (DISPLAY set: a local display, or one over TCP by address or as localhost, as ssh -X sets it, with its MIT-MAGIC-COOKIE-1 from XAUTHORITY or ~/.Xauthority) through the XFixes extension, reading with xclip; with neither it fails (exit 1). What is on offer at the start is recorded too. Each change is read in the best type offered (text first, then an image) and added as 'clip add' adds it: the newest entry again adds nothing, clipboard.maxBytes, clipboard.ignore and the secret detectors apply. An offer that includes x-kde-passwordManagerHint (KeePassXC and other password managers mark their clips so) is never read, stored or synced, nor is one whose list of types is longer than 1 MiB (the mark could be cut off). Each tool (wl-paste, xclip) is given 3 s; only the end of its stderr is kept for a message. An X server that does not answer within 5 s is given up on (exit 75); one whose reply is malformed fails (exit 1). An offer that changes while it is read is read again from the new one. Between changes it uses no CPU and holds no lock. One line on stderr per recorded or skipped clip (its id and type, never its content); with -q only errors. Exit status 75 when the compositor or X server goes away (a new session may bring one: try again later). With --follow (or the setting clipboard.follow) it also follows the other devices: when sync (sync watch, say) brings a clip copied on another device less than clipboard.followWindow seconds ago (default 120) and newer than anything in this history, it is put on this clipboard with its type; older ones never overwrite it. A clip added here, a local-only one and one that clipboard.ignore or the secret detectors would keep here are never followed. The copy it then sees is the newest entry again: nothing is added or sent back, so devices that all follow never echo. One line on stderr per clip followed or not followed.",
                options: [
                    primary(help: "Record the primary selection (what is selected, for middle-click paste) instead."),
                    OptionSpec("follow", help: "Also put on this clipboard the clips that sync brings from other devices."),
                ],
                examples: [
                    Example("itsypad clip watch", "Record the clipboard in a terminal; Ctrl-C stops."),
                    Example("itsypad clip watch --primary", "Record the primary selection."),
                    Example("itsypad clip watch --follow", "Record, and paste here what is copied on your other devices."),
                    Example(
                        "systemctl --user enable --now itsypad-clip-watch.service",
                        "Run it as a systemd user service with the graphical session (the unit itsypad install puts in PREFIX/share/systemd/user)."
                    ),
                ],
                action: ClipWatchCommand.run),
            CommandSpec(
                "rm", abstract: "Remove entries.",
                arguments: [ArgumentSpec("id", .requiredVariadic, help: "Ids or unique prefixes.", completion: .dynamic(.clips))],
                examples: [Example("itsypad clip rm 3f2a 9c1e", "Remove two entries.")],
                action: ClipCommands.remove),
            CommandSpec(
                "pin", abstract: "Pin an entry: never pruned, evicted or cleared (except by clear --all).",
                arguments: [ArgumentSpec("id", help: "The entry's id or unique prefix.", completion: .dynamic(.clips))],
                examples: [Example("itsypad clip pin 3f2a", "Keep it.")],
                action: { try ClipCommands.pin($0, true) }),
            CommandSpec(
                "unpin", abstract: "Unpin an entry.",
                arguments: [ArgumentSpec("id", help: "The entry's id or unique prefix.", completion: .dynamic(.clips))],
                examples: [Example("itsypad clip unpin 3f2a", "Let it go.")],
                action: { try ClipCommands.pin($0, false) }),
            CommandSpec(
                "clear", abstract: "Remove every unpinned entry.",
                options: [OptionSpec("all", help: "Remove pinned entries too.")],
                examples: [Example("itsypad clip clear", "Keep only pinned entries.")],
                action: ClipCommands.clear),
            CommandSpec(
                "prune", abstract: "Remove old entries (pinned ones are kept).",
                discussion:
                    "Defaults come from the settings clipboard.retention and clipboard.maxEntries. Durations: 90s, 30m, 12h, 7d, 2w or never.",
                options: [
                    OptionSpec(
                        "older-than", value: "DURATION", help: "Remove entries older than DURATION.",
                        completion: .values(RetentionDuration.examples)),
                    OptionSpec("keep", value: "N", help: "Keep at most N entries."),
                ],
                examples: [
                    Example("itsypad clip prune --older-than 7d", "Forget last week."),
                    Example(
                        "0 * * * * $HOME/.local/bin/itsypad clip prune",
                        "A crontab line (cron's PATH is /usr/bin:/bin: name the binary in full)."),
                ],
                action: ClipCommands.prune),
        ])

    static let settings = CommandSpec(
        "settings", abstract: "List, get and change settings.",
        discussion: "Synced settings travel to your other devices; device settings never leave this one.",
        options: [json],
        subcommands: [
            CommandSpec(
                "list", aliases: ["ls"], abstract: "List every setting with its value and scope.", options: [json],
                examples: [Example("itsypad settings list", "key=value lines.")], action: SettingsCommands.list),
            CommandSpec(
                "get", abstract: "Print a setting's value.",
                arguments: [ArgumentSpec("key", help: "The setting.", completion: .dynamic(.settingKeys))],
                examples: [Example("itsypad settings get clipboard.maxEntries", "Prints 1000 by default.")],
                action: SettingsCommands.get),
            CommandSpec(
                "set", abstract: "Change a setting.",
                arguments: [
                    ArgumentSpec("key", help: "The setting.", completion: .dynamic(.settingKeys)),
                    ArgumentSpec("value", .requiredVariadic, help: "The value (several for a list).", completion: .settingValue),
                ],
                examples: [
                    Example("itsypad settings set clipboard.retention 7d", "Prune after a week."),
                    Example("itsypad settings set clipboard.ignore '^otpauth://' 'password'", "Keep matching clips local-only."),
                ],
                action: SettingsCommands.set),
            CommandSpec(
                "unset", abstract: "Return a setting to its default.",
                arguments: [ArgumentSpec("key", help: "The setting.", completion: .dynamic(.settingKeys))],
                examples: [Example("itsypad settings unset clipboard.retention", "Back to never.")],
                action: SettingsCommands.unset),
        ],
        examples: [Example("itsypad settings", "Same as settings list.")],
        action: SettingsCommands.list)

    static let sync = CommandSpec(
        "sync", abstract: "Sync tabs, clips and synced settings through a shared backend directory or a git remote.",
        discussion:
            "Without a subcommand: pull, then push, then pull. Quiet on success unless standard output is a terminal, so cron mails only failures. Exit status 75 means the backend was locked, unreachable or missing (an unmounted disk: sync never creates a backend, only sync enable does), or another sync of this data directory was under way (a second sync does not wait for the first): try again later; nothing pending is lost. A sync locks the data directory only for short steps, never while it waits for the backend, so commands such as clip add run meanwhile; what they change is sent by this sync or the next. Exit status 1 with records named means something on the backend is malformed: it was skipped and everything else synced (see sync status). An I/O error, a refused permission or a read-only or full file system on the backend is exit 1 too, with the path and the reason: retrying cannot help until someone acts; nothing pending is lost.",
        subcommands: [
            CommandSpec(
                "enable",
                abstract:
                    "Start syncing through DIR (created if needed; its parent must exist) or a git remote, and run a first sync that merges both ways.",
                discussion:
                    "DIR must be new, empty, or hold a backend already: a folder holding anything else (your home directory by a slip) is refused (exit 1, nothing written); a folder Syncthing shares may hold its .stfolder. "
                    + "With --encrypt, DIR must hold no backend yet: a fresh 256-bit key is made, kept in the data directory (sync-key, mode 0600, never synced, exported only by export --include-sync-key) and every record and asset is encrypted with it before it is written. Other devices join with --key - and the recovery key that 'itsypad sync key show' prints. A device that has a key creates encrypted backends. A wrong or missing key fails (exit 1) before anything is written. With --key - on a terminal, the recovery key is asked for (\"Recovery key: \") and not echoed; from a pipe it is read as it comes. A key is never discarded by enabling another backend: the key it replaces is kept in the data directory (sync-keys/, named by the key check value its backend's zone.json records), and syncing with that backend again takes it back, whether it was enabled again or named with 'itsypad settings set sync.backend'. See itsypad-backend(5) for what stays visible. "
                    + "With git:URL (any URL git accepts: ssh://host/path, user@host:path, https://…, file://…, or the path of a local bare repository), the backend is kept in a clone of that repository in the data directory (sync/git), on a branch named itsypad that the first device creates and pushes. Every sync fetches, puts its own commits on top of the remote's, runs exactly as on a directory, then commits (naming the device and the counts) and pushes; a push refused because the remote moved is tried again after another fetch, at most three times, then the sync exits 75 with its commit kept for the next one. git runs without a shell and never prompts (GIT_TERMINAL_PROMPT=0; ssh in batch mode unless you chose your own ssh command with core.sshCommand, GIT_SSH or GIT_SSH_COMMAND, which is used as it is): authentication is git's own, ssh keys or credential helpers. Only the file, ssh, git, http and https transports are used, whatever GIT_ALLOW_PROTOCOL says (ext:: and other remote helpers run programs). Each git command is killed after ITSYPAD_GIT_TIMEOUT seconds (default 120). git runs at a lower CPU priority than the sync itself (nice 10, or yours if it is lower already), so that commands typed meanwhile are not slowed by it; the git of sync status runs at yours. No git installed, a repository that does not exist (create it with git init --bare), a key or password the remote refuses, or a URL git cannot use: exit 1 with git's message as git wrote it. No network, an unreachable host or a lock held on the remote: exit 75. Local changes stay queued or committed in the clone in every case. A remote whose history was rewritten (a force-push, a new repository) is taken as a replaced backend: the clone keeps its own commits under refs/itsypad/kept and the device sends everything it has again. A git remote's backend is created encrypted unless --no-encrypt says otherwise (its history keeps every byte ever pushed, on a host you may not control): the first device makes the key, the others join with --key -; joining an encrypted remote without it fails (exit 1) and says so. --encrypt and --key work the same as with a directory. "
                    + "With rclone:REMOTE:PATH (a remote of your rclone.conf, RCLONE_CONFIG honoured, such as gdrive:itsypad, s3:bucket/itsypad, dav:itsypad or sftp:itsypad; or a connection string such as rclone::sftp,host=server:itsypad), the backend is kept in a mirror in the data directory (sync/rclone) and on any storage rclone reaches. Every file of a backend has one writer, so no locking is needed: a sync lists the remote, downloads the other devices' files that changed since it last looked, runs exactly as on a directory, then uploads this device's changed files and removes there the ones it removed (sync compact too); it never writes or removes another device's file. A transfer cut short is done again by the next sync. A sync lists only the devices' journals and the record folders their new lines name; the whole remote on a first sync and every ITSYPAD_RCLONE_FULL_LISTING seconds (default 3600; 0 for every sync), which sees files changed there outside any journal. A sync runs one rclone process, rclone rcd, serving only this sync on 127.0.0.1 with credentials drawn at random, the remote given in its requests (never in an argument list); it never prompts (--ask-password=false), with connection and idle time-outs: an operation is stopped once it goes ITSYPAD_RCLONE_TIMEOUT seconds (default 300) without progress (bytes or files transferred, checked or removed). Files go in chunks of ITSYPAD_RCLONE_CHUNK (default 1000), each recorded as it lands, so a sync cut short resumes with the files not sent yet. The secrets of a connection string (pass=, token=, a URL's password) show as *** in messages, sync status and the activity log. No rclone installed, credentials the remote refuses or a remote missing from rclone.conf: exit 1 with rclone's message. No network, an unreachable host, a time-out or a busy server: exit 75. Local changes stay queued in every case. The backend is created encrypted unless --no-encrypt says otherwise, as for git.",
                arguments: [
                    ArgumentSpec(
                        "backend", .optional,
                        help:
                            "DIR, the backend directory (./a:b for one whose path starts like KIND:), git:URL or rclone:REMOTE:PATH (default: the sync.backend setting).",
                        completion: .directory)
                ],
                options: [
                    OptionSpec("encrypt", help: "Create DIR as an end-to-end encrypted backend with a new key."),
                    OptionSpec(
                        "key", value: "-", help: "Join the encrypted backend in DIR with the recovery key read from standard input."),
                    OptionSpec(
                        "no-encrypt",
                        help:
                            "Create an unencrypted backend (the default for a directory; a git or rclone remote's is encrypted otherwise)."),
                ],
                examples: [
                    Example("itsypad sync enable /mnt/usb/itsypad", "Sync through a USB disk."),
                    Example("itsypad sync enable git:me@server:itsypad.git", "Sync through a git remote reached over ssh (encrypted)."),
                    Example(
                        "itsypad sync enable git:me@server:itsypad.git --key -",
                        "Join it on another device (type the recovery key 'sync key show' prints)."),
                    Example("itsypad sync enable rclone:gdrive:itsypad", "Sync through Google Drive, a remote of rclone.conf (encrypted)."),
                    Example("itsypad sync enable ~/Dropbox/itsypad --encrypt", "Encrypt what a service replicates."),
                    Example("itsypad sync enable ~/Dropbox/itsypad --key -", "Join it on another device (type the recovery key)."),
                ],
                action: SyncCommands.enable),
            CommandSpec(
                "key", abstract: "Manage the end-to-end encryption key of an encrypted backend.",
                subcommands: [
                    CommandSpec(
                        "show", abstract: "Print this device's sync key as a recovery key to type on another device.",
                        discussion:
                            "The recovery key is 13 groups of base32 letters and digits, each with a check character so that a typo is caught and its group named. Anyone with it can read everything in the backend: keep it like a password. Losing every copy means the backend cannot be read; local data on each device is unaffected.",
                        examples: [Example("itsypad sync key show", "Show the key to enter with 'sync enable DIR --key -' elsewhere.")],
                        action: SyncKeyCommands.show),
                    CommandSpec(
                        "rotate", abstract: "Replace the sync key with a new one and re-encrypt everything with it.",
                        discussion:
                            "First a sync, so this device holds everything the backend does (if it does not finish, nothing is rotated). Then a new key is made and everything this device has is encrypted with it into a new zone built next to DIR, which then takes DIR's place. The old key no longer opens the backend: other devices' syncs stop with exit status 1, writing nothing and keeping their data, until 'itsypad sync enable DIR --key -' is run on each with the new recovery key (see 'itsypad sync key show'); they then send their data again, so nothing is lost. Use it when the recovery key may have leaked. A rotation a crash interrupted is finished or undone by the next sync. With a git remote, the new zone is pushed as one commit on top of the remote's tip: if another device pushed meanwhile, nothing is rotated (exit 1; rotate again); the old zone stays in the remote's history, readable only with the old key.",
                        examples: [
                            Example(
                                "itsypad sync key rotate && itsypad sync key show",
                                "Rotate, then show the new recovery key to type on the other devices.")
                        ],
                        action: SyncKeyCommands.rotate),
                ],
                examples: [
                    Example("itsypad sync key show", "Show the recovery key."),
                    Example("itsypad sync key rotate", "Change the key of the backend."),
                ]),
            CommandSpec(
                "disable", abstract: "Stop syncing; local data stays and changes are still recorded for later.",
                examples: [Example("itsypad sync disable", "Work offline.")], action: SyncCommands.disable),
            CommandSpec(
                "push", abstract: "Send pending changes.", examples: [Example("itsypad sync push", "Send only.")], action: SyncCommands.push
            ),
            CommandSpec(
                "pull", abstract: "Fetch and apply changes from other devices.", examples: [Example("itsypad sync pull", "Fetch only.")],
                action: SyncCommands.pull),
            CommandSpec(
                "status", abstract: "Show sync state: backend, device, last push and pull, pending, failed and quarantined items.",
                options: [json], examples: [Example("itsypad sync status", "Is everything sent?")], action: SyncCommands.status),
            CommandSpec(
                "log", abstract: "Show the activity log of sync attempts.",
                options: [OptionSpec("limit", short: "n", value: "N", help: "Show the newest N attempts."), json],
                examples: [Example("itsypad sync log -n 5", "The last five attempts.")], action: SyncCommands.log),
            CommandSpec(
                "compact", abstract: "Shrink the backend's change journal (devices far behind then re-fetch everything).",
                discussion:
                    "A backend has little to compact: each device compacts its own journal as it finishes a sync, so this removes tombstones over 90 days old, and temporary files a crash left anywhere in the backend over a day ago. On a git remote, the compaction is made in the clone after a fetch and pushed as one commit that marks a compaction point; then the history older than the previous compaction point is squashed into one commit and the branch force-pushed (with a lease: if another device pushed meanwhile, nothing is rewritten and the command exits 75), so that a year of syncs does not make a clone slow. The commits since the previous compaction are kept with the same files: a device that synced any of them carries on where it was. A device that has not synced since before the previous compaction takes the rewrite for a replaced backend: it keeps its own commits under refs/itsypad/kept and sends everything it has again, so nothing is lost. Compact at most as often as every device syncs (monthly from cron, say) and a device rarely pays that.",
                examples: [Example("itsypad sync compact", "Run monthly from cron.")], action: SyncCommands.compact),
            CommandSpec(
                "watch",
                abstract: "Sync continuously: at start, when this device's data or the backend changes, and every interval, until stopped.",
                discussion:
                    "Runs in the foreground (for a terminal or a systemd user service) until SIGINT, SIGTERM or SIGHUP, then exits 0; a signal that arrives during a sync ends it once that sync is done. Each sync is exactly 'itsypad sync', holding the data directory's lock only as that does; while waiting, the watcher holds no lock another command takes (only its own sync/watch.lock) and uses no CPU. Changes are noticed through inotify on sync/pending.log and on the backend's journal and zone.json, a fraction of a second after they happen; changes inotify cannot see (another machine writing to a network filesystem) are picked up by a sync every --interval seconds. A git remote is polled every --interval seconds (a peer's push sends no notification). A failed sync is one line on stderr and the watcher keeps going: a backend that is busy, unreachable or missing (exit 75 of a single sync) is tried again after 1, 2, 4 … seconds, at most the interval. One line on stderr for each sync that pulled or pushed something or failed, and for the first; with -q only failures. Exit status 1 when sync is not enabled, or when another 'sync watch' already runs for the same data directory (one is enough; retrying would not help).",
                options: [
                    OptionSpec(
                        "interval", value: "SECONDS",
                        help:
                            "Also sync every SECONDS (1-86400; default \(SyncWatchCommand.defaultInterval)), for changes no notification reports."
                    )
                ],
                examples: [
                    Example("itsypad sync watch", "Sync live in a terminal; Ctrl-C stops."),
                    Example(
                        "systemctl --user enable --now itsypad-sync-watch.service",
                        "Run it as a systemd user service (the unit itsypad install puts in PREFIX/share/systemd/user)."),
                ],
                action: SyncWatchCommand.run),
        ],
        examples: [
            Example(
                "*/5 * * * * $HOME/.local/bin/itsypad sync",
                "A crontab line: sync every five minutes (cron's PATH is /usr/bin:/bin: name the binary in full).")
        ],
        action: SyncCommands.run)

    /// The settings an export leaves out unless asked, and an import never applies.
    static let deviceSettings = Settings.all.filter { $0.scope == .device }.map(\.key).joined(separator: ", ")

    static let exportCommand = CommandSpec(
        "export", abstract: "Write all tabs, clips and settings as one JSON document to standard output.",
        discussion:
            "The sync key of an encrypted backend is left out unless --include-sync-key asks for it; an export that holds it opens everything in the backend, so keep it like a password. Importing it gives a device without a key this one's. Settings whose scope is this device (\(deviceSettings)) are left out unless --device-settings asks for them; import never applies them. An image or other binary clip whose file in the data directory is missing or damaged is left out and named on stderr, everything else is written, and the exit status is 1: the document still imports.",
        options: [
            OptionSpec("include-sync-key", help: "Also write this device's sync key (member syncKey, as a recovery key)."),
            OptionSpec("device-settings", help: "Also write the settings whose scope is this device (for reference: import skips them)."),
        ],
        examples: [
            Example("itsypad export > backup.json", "Back up everything."),
            Example(
                "itsypad export --include-sync-key > backup-with-key.json", "Back up everything, the key to the encrypted backend too."),
        ],
        action: TransferCommands.export)

    static let importCommand = CommandSpec(
        "import", abstract: "Merge an export, a legacy iCloud key-value dump or another clipboard manager's history.",
        discussion:
            "Items merge by id; the newer lastModified wins. A tab that names a file (fileURL) is imported as a normal tab holding the text the export carries, never backed by that file; their count is named on standard error. FILE may be a pipe or a FIFO (itsypad import <(...)): it is read to its end into an unlinked file in the data directory first. An import is all or nothing: a failure before its commit changes nothing (\"nothing was imported\"); an I/O error while its files are moved into place is retried, and if it persists, the next itsypad command finishes the import. Importing the same file again restores what a cut-short import of an earlier version left out: an image's missing bytes, and the queueing of clips and tabs never sent. Settings whose scope is this device (\(deviceSettings)) are never applied from a file: each one skipped is named on standard error. A sync key in the export (see export --include-sync-key) becomes this device's if it has none and does not sync unencrypted; otherwise it is left out, with a warning. With --kvs the file holds Itsypad's old key-value layout (tabs, deletedTabIDs, clipboard, deletedClipboardIDs) and its tombstones are honoured; each key's value may be the array itself, the JSON document as a string, or that document as base64 data (as a property-list export writes it), and a value in none of these forms fails the import, naming the key; a dump over 16 MiB is refused (the key-value store held at most 1 MB).\n"
            + "With --from clipman, FILE is clipman's history, by default ~/.local/share/clipman.json (where clipman keeps it, whatever XDG_DATA_HOME says). With --from copyq, the items of the running CopyQ's first tab are read through the copyq command (exit 1 when it is not installed or not running; exit 75 when it does not answer within 300 s or is still running 5 s after its output ended: it is then stopped). The tool's order is kept: its newest entry is dated the time of the import, each older one a millisecond earlier. A text the history holds already is not added again, and the tool's entries older than it go below it (so that importing again, after raising clipboard.maxEntries, keeps the order). Entries that are empty, not text (a CopyQ image) or larger than clipboard.maxBytes are left out, each named on standard error.",
        arguments: [
            ArgumentSpec(
                "file", .optional, help: "The file to read, or - for standard input (required, except with --from).", completion: .file)
        ],
        options: [
            OptionSpec("kvs", help: "Read the legacy iCloud key-value layout."),
            OptionSpec(
                "from", value: "TOOL", help: "Read the history of another clipboard manager: clipman or copyq.",
                completion: .values(HistorySource.allCases.map(\.rawValue))),
        ],
        examples: [
            Example("itsypad export | itsypad --data-dir /tmp/copy import -", "Copy a data directory."),
            Example("itsypad import --from clipman", "Take over clipman's history."),
            Example("itsypad import --from copyq", "Take over the running CopyQ's first tab."),
        ],
        action: TransferCommands.importFile)

    static let help = CommandSpec(
        "help", abstract: "Show help for a command.",
        arguments: [ArgumentSpec("command", .variadic, help: "The command, e.g. 'clip add'.", completion: .commandPath)],
        examples: [Example("itsypad help clip add", "Help for clip add.")],
        action: HelpCommands.help)

    static let completions = CommandSpec(
        "completions", abstract: "Print a shell completion script (bash, zsh or fish).",
        arguments: [ArgumentSpec("shell", help: "bash, zsh or fish.", completion: .values(Shell.allCases.map(\.rawValue)))],
        examples: [Example("itsypad completions bash > ~/.local/share/bash-completion/completions/itsypad", "Install for bash.")],
        action: HelpCommands.completions)

    static let prefix = OptionSpec(
        "prefix", value: "DIR", help: "Use DIR as the prefix (default: $PREFIX, else ~/.local).",
        completion: .directory)

    static let install = CommandSpec(
        "install", abstract: "Install this itsypad, its man pages and shell completions under a prefix.",
        discussion:
            "Copies the running binary to PREFIX/bin, the man pages to PREFIX/share/man/man1 and man5, the bash, zsh and fish completions to PREFIX/share/bash-completion/completions, PREFIX/share/zsh/site-functions and PREFIX/share/fish/vendor_completions.d, and the systemd user units itsypad-sync-watch.service (running PREFIX/bin/itsypad sync watch) and itsypad-clip-watch.service (PREFIX/bin/itsypad clip watch, with the graphical session) to PREFIX/share/systemd/user, where systemctl --user finds it for ~/.local and /usr/local. Directories are created as needed and each file is replaced atomically, its mode set before it is renamed into place (0755 for the binary, 0644 for the rest). Warns when PREFIX/bin is not on PATH.",
        options: [prefix],
        examples: [
            Example(
                "swift build -c release --static-swift-stdlib -Xlinker -s && .build/release/itsypad install",
                "Build and install into ~/.local."),
            Example("sudo .build/release/itsypad install --prefix /usr/local", "Install for every user."),
        ],
        action: InstallCommands.install)

    static let uninstall = CommandSpec(
        "uninstall", abstract: "Remove the files install writes under a prefix.",
        discussion:
            "Removes the binary, the man pages, the completion scripts and the systemd units that itsypad install writes under PREFIX; directories and the data directory are left alone. A symbolic link below PREFIX is never followed: a file reached through a linked directory is left, named, and the exit status is 1. Disable the units first if they are enabled: systemctl --user disable --now itsypad-sync-watch.service itsypad-clip-watch.service.",
        options: [prefix],
        examples: [Example("itsypad uninstall", "Remove what 'itsypad install' put in ~/.local.")],
        action: InstallCommands.uninstall)

    /// Called back by the completion scripts for ids, names and keys.
    static let complete = CommandSpec(
        "__complete", abstract: "Print completion candidates (used by the completion scripts).",
        arguments: [ArgumentSpec("kind", help: "tabs, clips, setting-keys or languages.")],
        hidden: true, action: HelpCommands.complete)
}
