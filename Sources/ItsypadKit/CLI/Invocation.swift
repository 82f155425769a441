import ItsypadStore
import ItsypadSupport

/// A parsed command line with its context: what a command's action receives.
public final class Invocation {
    public let parsed: ParsedCommand
    public let context: Context
    private var openedStore: DataStore?
    private var warnedAboutExposure = false

    init(parsed: ParsedCommand, context: Context) {
        self.parsed = parsed
        self.context = context
    }

    public var arguments: [String] { parsed.arguments }
    public func flag(_ option: OptionName) -> Bool { values(option) != nil }
    /// The last value given for an option.
    public func value(_ option: OptionName) -> String? { values(option)?.last }

    /// An integer option within `range`; a usage error otherwise.
    public func integer(_ option: OptionName, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = value(option) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw usage("'--\(option.rawValue)' takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'.")
        }
        return number
    }

    /// Every option the action has asked about, given or not: a test checks
    /// each against the command's entry in the table, since reading an option
    /// the entry lacks would silently see it unset.
    /// (An array: a `Set` of a type of ours costs every command a run-time conformance search at start-up.)
    private(set) var optionsRead: [OptionName] = []

    private func values(_ option: OptionName) -> [String]? {
        if !optionsRead.contains(option) { optionsRead.append(option) }
        return parsed.options[option.rawValue]
    }

    public func usage(_ message: String) -> ItsypadError { .usage(message, command: parsed.names) }

    public var quiet: Bool { flag(.quiet) }

    public var out: OutputBuffer { context.standardOutput }

    /// A message for a person on stderr: only on a terminal and without -q,
    /// so that cron mails only failures. Like every message, made safe for a terminal.
    public func note(_ message: String) {
        if !quiet && context.stderrIsTerminal { context.standardError.line(message, terminalSafe: true) }
    }

    public func warn(_ message: String) { context.standardError.line("warning: " + message, terminalSafe: true) }

    /// Long work's progress on stderr, one line redrawn in place (`ProgressLine`): only when stderr
    /// is a terminal and without -q, so that nothing of it goes through a pipe or into cron's mail.
    package func progress(_ label: String, done: Int, of total: Int?, unit: ProgressLine.Unit = .records) {
        guard !quiet, context.stderrIsTerminal else { return }
        progressLine.update(label, done: done, of: total, unit: unit)
    }

    /// Erases the progress line, at once: standard output, written later, must
    /// not land on the line the progress used.
    public func endProgress() { progressLine.finish() }

    private lazy var progressLine = ProgressLine(draw: { [context] text in
        context.standardError.write(text)
        context.standardError.flush()
    })

    /// The data directory's path, as given or by default.
    public func dataDirectory() throws -> String {
        // An empty --data-dir would make the current directory a data directory.
        if value(.dataDirectory)?.isEmpty == true { throw usage("'--data-dir' needs a directory, not an empty string.") }
        guard let path = value(.dataDirectory) ?? DataStore.defaultPath(variable: context.variable) else {
            throw ItsypadError.failure("no data directory: set HOME, ITSYPAD_DATA_DIR or pass --data-dir")
        }
        return FileSystem.absolute(path)
    }

    /// How long a command waits for the data directory's lock: `ITSYPAD_LOCK_TIMEOUT`, 10 s.
    var lockTimeout: Double { context.variable("ITSYPAD_LOCK_TIMEOUT").flatMap(Double.init) ?? 10 }

    /// The data directory, opened and locked on first use (`lockTimeout` overrides ITSYPAD_LOCK_TIMEOUT).
    public func store(lockTimeout: Double? = nil) throws -> DataStore {
        if let openedStore { return openedStore }
        let store = try DataStore(
            path: try dataDirectory(), lockTimeout: lockTimeout ?? self.lockTimeout, warn: { [weak self] in self?.warn($0) })
        if let mode = store.exposure, !warnedAboutExposure {
            warnedAboutExposure = true
            warn(Invocation.exposureWarning("the data directory", store.path, mode))
        }
        openedStore = store
        return store
    }

    /// One line on stderr, the way ssh treats a private key others can read.
    static func exposureWarning(_ what: String, _ path: String, _ mode: UInt32) -> String {
        "\(what) \(path) is accessible by other users (mode \(String(mode, radix: 8))); run 'chmod 700 \(path)'"
    }

    /// Releases the data directory's lock.
    func close() {
        openedStore?.close()
        openedStore = nil
    }
}
