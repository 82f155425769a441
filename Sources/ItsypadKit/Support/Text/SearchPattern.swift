/// Why a pattern was refused; `offset` counts Unicode scalars from 0.
public struct SearchPatternError: Error, Equatable, CustomStringConvertible {
    public let reason: String
    public let offset: Int
    public var description: String { "\(reason) (at character \(offset + 1))" }
}

/// A regular expression whose matching costs at most time proportional to
/// pattern size × text length, whatever the pattern and the text: the text
/// is read once, left to right, while the set of automaton states that can
/// be active is kept (Thompson's construction, simulated as RE2 and Go's
/// regexp do). No path is ever tried twice, so `(a+)+$`, which makes a
/// backtracking matcher run for minutes on 31 characters, costs what `a+$`
/// costs. Patterns come from peers (`clipboard.ignore` is synced), so this
/// bound is what keeps a device from being stalled by one.
///
/// Syntax, the common ground of PCRE and Swift Regex: literals and escapes
/// (`\n \t \r \f \a \e \0 \xhh \x{…} \uhhhh \u{…} \o{…}`, `\Q…\E`, escaped
/// punctuation), `.`, bracket expressions with ranges, negation, class
/// escapes and `[:alpha:]`-style names, `\d \w \s \h \v` and their negations,
/// `\p{…}`/`\P{…}` for general categories and a few binary properties,
/// anchors `^ $ \A \z \Z \b \B`, `\R`, groups `(…)`, `(?:…)`, `(?<name>…)`,
/// `|`, `* + ? {m} {m,} {m,n} {,n}` (lazy forms accepted; counts up to
/// ``maxRepetition``), flags `i m s x` as `(?i)` or `(?i:…)`, comments `(?#…)`.
/// Refused, with the reason: backreferences, lookahead and lookbehind, atomic
/// groups, possessive quantifiers, recursion, conditionals, and patterns
/// larger than ``maxSize`` instructions once repetitions are expanded.
///
/// Semantics: ``matches(_:)`` tells whether the text contains a match
/// anywhere. Matching is over Unicode scalars (not grapheme clusters): `.`
/// is one scalar other than a line break (any scalar under `(?s)`). `^` and
/// `$` are the start and end of the whole text; under `(?m)` they also match
/// after and before each line break (LF, CR, CRLF as one, VT, FF, NEL, U+2028,
/// U+2029). `(?i)` compares simple case foldings (`k` ~ `K` ~ Kelvin sign, but
/// not `ß` ~ `SS`). `\d`, `\w`, `\s` and `\b` are Unicode-aware.
public struct SearchPattern: Sendable, CustomStringConvertible {
    /// The largest count in `{m,n}`.
    public static let maxRepetition = 1000
    /// The most instructions one pattern may compile to. Matching costs at
    /// most two steps per instruction per scalar of text, and a step takes a
    /// few nanoseconds: a pattern of this size on a 1 MB text, in the worst
    /// case (every state live at every position), takes seconds, not minutes.
    public static let maxSize = 1000
    static let maxNesting = 100

    public let source: String
    private let program: [Instruction]
    private let sets: [ScalarSet]
    /// Whether some instruction compares case-folded scalars.
    private let foldsText: Bool

    public init(_ source: String) throws(SearchPatternError) {
        let node = try PatternParser.parse(source)
        // One more instruction ends the program.
        let size = SearchPattern.size(of: node) + 1
        guard size <= SearchPattern.maxSize else {
            throw SearchPatternError(
                reason: "the pattern is too large: over \(SearchPattern.maxSize) instructions once repetitions are expanded", offset: 0)
        }
        var compiler = Compiler()
        compiler.emit(node)
        compiler.program.append(.match)
        self.source = source
        program = compiler.program
        sets = compiler.sets
        foldsText = compiler.program.contains {
            if case .foldedScalar = $0 { return true }; return false
        }
    }

    /// The number of instructions: the pattern's size in the cost bound.
    public var size: Int { program.count }

    public var description: String { source }

    /// Whether `text` contains a match.
    public func matches(_ text: String) -> Bool {
        search(text).matched
    }

    /// Whether `text` contains a match, and the steps taken (instructions
    /// visited plus scalars tested), which never exceed 2 × size × (scalars + 1).
    func search(_ text: String) -> (matched: Bool, steps: Int) {
        var text = text
        return text.withUTF8 { bytes in
            program.withUnsafeBufferPointer { program in
                var matcher = Matcher(program: program, sets: sets, foldsText: foldsText, text: bytes)
                defer { matcher.deallocate() }
                let matched = matcher.run()
                return (matched, matcher.steps)
            }
        }
    }

    /// Instructions `node` compiles to, saturating above the limit so that
    /// `(x{1000}){1000}` is measured without overflow or allocation.
    private static func size(of node: PatternNode) -> Int {
        let ceiling = maxSize
        switch node {
        case .empty:
            return 0
        case .scalar, .foldedScalar, .set, .assertion:
            return 1
        case .sequence(let items):
            return items.reduce(0) { min(ceiling, $0 + size(of: $1)) }
        case .choice(let branches):
            return min(ceiling, branches.reduce(0) { min(ceiling, $0 + size(of: $1)) } + 2 * (branches.count - 1))
        case .repetition(let body, let minimum, let maximum):
            let body = size(of: body)
            let optional = maximum.map { ($0 - minimum) * (body + 1) } ?? body + 2
            return min(ceiling, minimum * body + optional)
        }
    }
}

/// One step of the compiled automaton.
private enum Instruction: Sendable {
    case scalar(UInt32)
    case foldedScalar(UInt32)
    /// A set: its ASCII bitmap inline (no lookup for ASCII text), and its
    /// index among the pattern's sets for other scalars.
    case set(asciiLow: UInt64, asciiHigh: UInt64, index: Int)
    case assertion(PatternAssertion)
    /// Continue at both targets.
    case split(Int, Int)
    case jump(Int)
    case match
}

/// Thompson's construction: each node becomes a fragment of instructions.
private struct Compiler {
    var program: [Instruction] = []
    var sets: [ScalarSet] = []

    mutating func emit(_ node: PatternNode) {
        switch node {
        case .empty:
            break
        case .scalar(let value):
            program.append(.scalar(value))
        case .foldedScalar(let value):
            program.append(.foldedScalar(value))
        case .set(let set):
            sets.append(set)
            program.append(.set(asciiLow: set.asciiLow, asciiHigh: set.asciiHigh, index: sets.count - 1))
        case .assertion(let assertion):
            program.append(.assertion(assertion))
        case .sequence(let items):
            for item in items { emit(item) }
        case .choice(let branches):
            var jumpsToEnd: [Int] = []
            for branch in branches.dropLast() {
                let split = reserve()
                emit(branch)
                jumpsToEnd.append(reserve())
                program[split] = .split(split + 1, program.count)
            }
            emit(branches[branches.count - 1])
            for jump in jumpsToEnd { program[jump] = .jump(program.count) }
        case .repetition(let body, let minimum, let maximum):
            for _ in 0..<minimum { emit(body) }
            if let maximum {
                // x{2,5} = xx(x(x(x)?)?)?: every optional copy may skip to the end.
                var splits: [Int] = []
                for _ in minimum..<maximum {
                    splits.append(reserve())
                    emit(body)
                }
                for split in splits { program[split] = .split(split + 1, program.count) }
            } else {
                let loop = reserve()
                emit(body)
                program.append(.jump(loop))
                program[loop] = .split(loop + 1, program.count)
            }
        }
    }

    /// Makes room for a split or jump whose target is not known yet.
    private mutating func reserve() -> Int {
        program.append(.jump(-1))
        return program.count - 1
    }
}

/// One run over one text. The states reached at a position are kept once
/// each (a generation mark per instruction), so a position costs at most one
/// visit per instruction plus one test per waiting instruction. The
/// workspace is sized by the program and allocated once per run.
private struct Matcher {
    private let program: UnsafeBufferPointer<Instruction>
    private let sets: [ScalarSet]
    private let foldsText: Bool
    private let text: UnsafeBufferPointer<UInt8>
    /// Where `\Z` holds besides the end: before a final line break (or -1).
    private let finalLineBreak: Int
    /// Per instruction, the last generation (position + 1) that reached it.
    private let marks: UnsafeMutableBufferPointer<Int>
    /// Instructions waiting for a scalar at this position and the next.
    private var current: UnsafeMutableBufferPointer<Int>
    private var next: UnsafeMutableBufferPointer<Int>
    /// Each reached instruction pushes at most two more.
    private let stack: UnsafeMutableBufferPointer<Int>
    private(set) var steps = 0

    /// Stands for "no scalar": before the start and after the end.
    private static let none = UInt32.max

    init(program: UnsafeBufferPointer<Instruction>, sets: [ScalarSet], foldsText: Bool, text: UnsafeBufferPointer<UInt8>) {
        self.program = program
        self.sets = sets
        self.foldsText = foldsText
        self.text = text
        finalLineBreak = Matcher.finalLineBreak(in: text)
        marks = .allocate(capacity: program.count)
        marks.initialize(repeating: 0)
        current = .allocate(capacity: program.count)
        next = .allocate(capacity: program.count)
        stack = .allocate(capacity: 2 * program.count + 1)
    }

    func deallocate() {
        marks.deallocate()
        current.deallocate()
        next.deallocate()
        stack.deallocate()
    }

    mutating func run() -> Bool {
        var offset = 0
        var generation = 1
        var (scalar, length) = decode(at: 0)
        var waiting = 0
        if addThread(at: 0, previous: Matcher.none, scalar: scalar, offset: 0, generation: generation, into: current, count: &waiting) {
            return true
        }
        while scalar != Matcher.none {
            generation += 1
            let nextOffset = offset + length
            let (following, followingLength) = decode(at: nextOffset)
            let folded = foldsText ? CaseFolding.fold(scalar) : scalar
            var nextWaiting = 0
            steps += waiting
            for index in 0..<waiting {
                let pc = current[index]
                guard consumes(program[pc], scalar, folded) else { continue }
                if addThread(
                    at: pc + 1, previous: scalar, scalar: following, offset: nextOffset, generation: generation, into: next,
                    count: &nextWaiting)
                {
                    return true
                }
            }
            // A match may also start at the next position.
            if addThread(
                at: 0, previous: scalar, scalar: following, offset: nextOffset, generation: generation, into: next, count: &nextWaiting)
            {
                return true
            }
            swap(&current, &next)
            waiting = nextWaiting
            (scalar, length) = (following, followingLength)
            offset = nextOffset
        }
        return false
    }

    /// Follows splits, jumps and assertions from `start` at one position,
    /// appending the instructions that wait for a scalar; true on reaching a match.
    private mutating func addThread(
        at start: Int, previous: UInt32, scalar: UInt32, offset: Int, generation: Int,
        into list: UnsafeMutableBufferPointer<Int>, count: inout Int
    ) -> Bool {
        var depth = 1
        stack[0] = start
        while depth > 0 {
            depth -= 1
            let pc = stack[depth]
            if marks[pc] == generation { continue }
            marks[pc] = generation
            steps += 1
            switch program[pc] {
            case .split(let first, let second):
                stack[depth] = second
                stack[depth + 1] = first
                depth += 2
            case .jump(let target):
                stack[depth] = target
                depth += 1
            case .assertion(let assertion):
                if holds(assertion, previous: previous, scalar: scalar, offset: offset) {
                    stack[depth] = pc + 1
                    depth += 1
                }
            case .match:
                return true
            case .scalar, .foldedScalar, .set:
                list[count] = pc
                count += 1
            }
        }
        return false
    }

    private func consumes(_ instruction: Instruction, _ scalar: UInt32, _ folded: UInt32) -> Bool {
        switch instruction {
        case .scalar(let value): return value == scalar
        case .foldedScalar(let value): return value == folded
        case .set(let low, let high, let index):
            if scalar < 64 { return low & (1 << UInt64(scalar)) != 0 }
            if scalar < 128 { return high & (1 << UInt64(scalar - 64)) != 0 }
            return sets[index].contains(scalar)
        default: return false
        }
    }

    private func holds(_ assertion: PatternAssertion, previous: UInt32, scalar: UInt32, offset: Int) -> Bool {
        // CR LF is one line break: no line starts or ends between its two scalars.
        let insideCRLF = previous == 0x0D && scalar == 0x0A
        switch assertion {
        case .textStart: return offset == 0
        case .textEnd: return scalar == Matcher.none
        case .textEndBeforeFinalNewline: return scalar == Matcher.none || offset == finalLineBreak
        case .lineStart: return previous == Matcher.none || ScalarProperty.isNewline(previous) && !insideCRLF
        case .lineEnd: return scalar == Matcher.none || ScalarProperty.isNewline(scalar) && !insideCRLF
        case .wordBoundary: return ScalarProperty.isWord(previous) != ScalarProperty.isWord(scalar)
        case .notWordBoundary: return ScalarProperty.isWord(previous) == ScalarProperty.isWord(scalar)
        }
    }

    /// The scalar at `offset` and its length in bytes; `none` at the end.
    private func decode(at offset: Int) -> (UInt32, Int) {
        Matcher.decode(text, at: offset)
    }

    /// The bytes are a Swift string's, so they are valid UTF-8.
    private static func decode(_ text: UnsafeBufferPointer<UInt8>, at offset: Int) -> (UInt32, Int) {
        guard offset < text.count else { return (none, 0) }
        let lead = UInt32(text[offset])
        if lead < 0x80 { return (lead, 1) }
        func continuation(_ index: Int) -> UInt32 { UInt32(text[offset + index] & 0x3F) }
        if lead < 0xE0 { return ((lead & 0x1F) << 6 | continuation(1), 2) }
        if lead < 0xF0 { return ((lead & 0x0F) << 12 | continuation(1) << 6 | continuation(2), 3) }
        return ((lead & 0x07) << 18 | continuation(1) << 12 | continuation(2) << 6 | continuation(3), 4)
    }

    private static func finalLineBreak(in text: UnsafeBufferPointer<UInt8>) -> Int {
        let count = text.count
        if count >= 2, text[count - 2] == 0x0D, text[count - 1] == 0x0A { return count - 2 }
        var start = count - 1
        while start > 0, text[start] & 0xC0 == 0x80 { start -= 1 }
        return start >= 0 && ScalarProperty.isNewline(decode(text, at: start).0) ? start : -1
    }
}

/// Several patterns used together: a text matches when any of them does.
/// A pattern that cannot be used is set aside with the reason, and so is one
/// that would take the list's total size past ``SearchPattern/maxSize``, so
/// that matching the whole list keeps the cost bound of a single pattern.
public struct SearchPatternList: Sendable {
    public let sources: [String]
    public let patterns: [SearchPattern]
    /// The patterns set aside, with why.
    public let refused: [(source: String, reason: String)]

    public init(_ sources: [String]) {
        var patterns: [SearchPattern] = []
        var refused: [(source: String, reason: String)] = []
        var total = 0
        for source in sources {
            do {
                let pattern = try SearchPattern(source)
                guard total + pattern.size <= SearchPattern.maxSize else {
                    refused.append((source, "the patterns together are too large: over \(SearchPattern.maxSize) instructions"))
                    continue
                }
                total += pattern.size
                patterns.append(pattern)
            } catch {
                refused.append((source, error.description))
            }
        }
        self.sources = sources
        self.patterns = patterns
        self.refused = refused
    }

    /// Whether any pattern matches somewhere in `text`.
    public func matches(_ text: String) -> Bool {
        patterns.contains { $0.matches(text) }
    }
}
