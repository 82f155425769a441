import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Where command output goes: a file descriptor, or memory for in-process tests.
/// Output is buffered and written with write(2) in order, so stdout and stderr
/// are never interleaved mid-line and nothing is lost on exit.
public final class OutputBuffer {
    private let fd: Int32?
    private var pending: [UInt8] = []
    /// Everything written, when capturing in memory.
    public private(set) var captured: [UInt8] = []

    public init(fd: Int32) { self.fd = fd }
    public init() { fd = nil }

    public var text: String { String(decoding: captured, as: UTF8.self) }

    /// Whether what is written is kept in memory (a test's context) rather than written out.
    var isMemory: Bool { fd == nil }

    public func write(_ string: String) {
        write(Array(string.utf8))
    }

    public func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes(write) }

    public func write(_ bytes: UnsafeRawBufferPointer) {
        guard fd != nil else { captured += bytes; return }
        pending += bytes
        if pending.count >= OutputBuffer.writeSize { flush() }
    }

    public func line(_ string: String) { write(string + "\n") }

    /// A line that may hold text from elsewhere (a tool's, a peer's, a file's): with `terminalSafe`,
    /// its control characters are shown as U+FFFD (see `Text.makeTerminalSafe`), so that the text
    /// can neither drive a terminal nor start a line of its own.
    public func line(_ string: String, terminalSafe: Bool) {
        guard terminalSafe else { return line(string) }
        var bytes = Array(string.utf8)
        Text.makeTerminalSafe(&bytes)
        bytes.append(0x0A)
        write(bytes)
    }

    /// Appends in place, without an array of its own per call (a listing
    /// writes 100,000 lines); written out once a few hundred KiB are waiting.
    func append<Result>(_ body: (inout [UInt8]) throws -> Result) rethrows -> Result {
        guard fd != nil else { return try body(&captured) }
        let result = try body(&pending)
        if pending.count >= OutputBuffer.writeSize { flush() }
        return result
    }

    private static let writeSize = 1 << 18

    public func flush() { writeOut(&pending) }

    /// Inside `append`, for output that grows long (a text of many MiB): writes out what
    /// `append` handed over and empties it. Nothing happens when capturing in memory.
    func writeOut(_ bytes: inout [UInt8]) {
        guard fd != nil, !bytes.isEmpty else { return }
        bytes.withUnsafeBytes(writeOut)
        bytes.removeAll(keepingCapacity: true)
    }

    private func writeOut(_ bytes: UnsafeRawBufferPointer) {
        guard let fd else { return }
        // A closed pipe (`itsypad clip ls | head -1`) ends the process quietly via SIGPIPE, as git does.
        try? FileSystem.writeAll(fd: fd, bytes, path: "output")
    }
}

/// Everything a command may touch outside the data directory: environment,
/// standard streams and the clock. Tests build one in memory.
public final class Context {
    /// The environment's variables, for handing to a subprocess whole. The process's are read on first
    /// use: most commands only look up a variable or two (`variable`), which builds no dictionary.
    public var environment: [String: String] {
        if let variables { return variables }
        let read = Context.processEnvironment()
        variables = read
        return read
    }
    /// nil until the process's environment is asked for whole.
    private var variables: [String: String]?
    public let stdinIsTerminal: Bool
    public let stdoutIsTerminal: Bool
    public let stderrIsTerminal: Bool
    public let standardOutput: OutputBuffer
    public let standardError: OutputBuffer
    /// Reads standard input, stopping after the given number of bytes.
    private let readInput: (Int) throws -> [UInt8]
    /// Standard input's descriptor, to read it as a stream (`import -`); nil in memory (tests).
    public private(set) var inputDescriptor: Int32?
    public let now: () -> Milliseconds

    /// `readInput` returns all of standard input.
    public convenience init(
        environment: [String: String], stdinIsTerminal: Bool, stdoutIsTerminal: Bool, stderrIsTerminal: Bool,
        standardOutput: OutputBuffer, standardError: OutputBuffer,
        readInput: @escaping () throws -> [UInt8], now: @escaping () -> Milliseconds = Time.now
    ) {
        self.init(
            environment: environment, stdinIsTerminal: stdinIsTerminal, stdoutIsTerminal: stdoutIsTerminal,
            stderrIsTerminal: stderrIsTerminal, standardOutput: standardOutput, standardError: standardError,
            readUpTo: { Array(try readInput().prefix($0)) }, now: now)
    }

    /// `readUpTo` reads standard input up to a number of bytes (a large input is not held whole).
    public convenience init(
        environment: [String: String], stdinIsTerminal: Bool, stdoutIsTerminal: Bool, stderrIsTerminal: Bool,
        standardOutput: OutputBuffer, standardError: OutputBuffer,
        readUpTo readInput: @escaping (Int) throws -> [UInt8], now: @escaping () -> Milliseconds = Time.now
    ) {
        self.init(
            variables: environment, stdinIsTerminal: stdinIsTerminal, stdoutIsTerminal: stdoutIsTerminal,
            stderrIsTerminal: stderrIsTerminal, standardOutput: standardOutput, standardError: standardError,
            readUpTo: readInput, now: now)
    }

    /// `variables`: nil for the process's own environment, read when asked for.
    private init(
        variables: [String: String]?, stdinIsTerminal: Bool, stdoutIsTerminal: Bool, stderrIsTerminal: Bool,
        standardOutput: OutputBuffer, standardError: OutputBuffer,
        readUpTo readInput: @escaping (Int) throws -> [UInt8], now: @escaping () -> Milliseconds
    ) {
        self.variables = variables
        self.stdinIsTerminal = stdinIsTerminal
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.readInput = readInput
        self.now = now
    }

    /// The process's real environment and streams.
    public static func process() -> Context {
        let context = Context(
            variables: nil, stdinIsTerminal: isatty(0) == 1, stdoutIsTerminal: isatty(1) == 1,
            stderrIsTerminal: isatty(2) == 1, standardOutput: OutputBuffer(fd: 1),
            standardError: OutputBuffer(fd: 2), readUpTo: { try FileSystem.readAll(fd: 0, limit: $0) }, now: Time.now)
        context.inputDescriptor = 0
        return context
    }

    /// One variable of the environment; nil when it is not set.
    public func variable(_ name: String) -> String? {
        if let variables { return variables[name] }
        // The process's own, without building the whole dictionary at start-up (most of that would be
        // the run-time lookup of its key's Hashable conformance).
        return getenv(name).map { String(cString: $0) }
    }

    private static func processEnvironment() -> [String: String] {
        var environment: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let pair = String(cString: entry)
            // Split on the byte: `Character` search breaks graphemes, which every command paid for each variable.
            // The first of two entries of one name wins, as with getenv.
            if let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(pair[..<equals])
                if environment[name] == nil { environment[name] = String(pair[pair.utf8.index(after: equals)...]) }
            }
            pointer += 1
        }
        return environment
    }

    /// An in-memory context for tests.
    public static func memory(
        environment: [String: String] = [:], stdin: [UInt8]? = nil, stdinIsTerminal: Bool = false,
        stdoutIsTerminal: Bool = false, stderrIsTerminal: Bool = false,
        now: @escaping () -> Milliseconds = Time.now
    ) -> Context {
        Context(
            environment: environment, stdinIsTerminal: stdinIsTerminal, stdoutIsTerminal: stdoutIsTerminal,
            stderrIsTerminal: stderrIsTerminal,
            standardOutput: OutputBuffer(), standardError: OutputBuffer(), readUpTo: { Array((stdin ?? []).prefix($0)) }, now: now)
    }

    private var consumedInput: [UInt8]?

    /// A secret typed at the terminal: `prompt` on standard error, then a line read with echo off.
    /// In memory (tests) the prompt is written to `standardError` and the line is standard input.
    public func secretLine(prompt: String) throws -> [UInt8] {
        guard standardError.isMemory else { return try Terminal.readSecretLine(prompt: prompt) }
        standardError.write(prompt)
        return try standardInput()
    }

    /// All of standard input (read once).
    public func standardInput() throws -> [UInt8] {
        if let consumedInput { return consumedInput }
        let bytes = try readInput(Int.max)
        consumedInput = bytes
        return bytes
    }

    /// Standard input up to `limit` bytes, read once and not kept; nil when there is more.
    public func standardInput(limit: Int) throws -> [UInt8]? {
        let bytes = try readInput(limit == Int.max ? limit : limit + 1)
        return bytes.count > limit ? nil : bytes
    }

    /// Help and messages wrap to COLUMNS, else the terminal's width, else 80.
    public var columns: Int {
        if let value = variable("COLUMNS").flatMap(Int.init), value > 20 { return value }
        if stdoutIsTerminal {
            var size = winsize()
            if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        }
        return 80
    }

    /// Colour only on a terminal, never with NO_COLOR or TERM=dumb.
    public var stderrUsesColor: Bool {
        stderrIsTerminal && variable("NO_COLOR") == nil && variable("TERM") != "dumb"
    }
}
