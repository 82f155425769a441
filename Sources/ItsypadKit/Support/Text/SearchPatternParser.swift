/// The syntax tree of a ``SearchPattern``. Groups leave no trace: without
/// backreferences a group only decides what a quantifier or `|` applies to.
indirect enum PatternNode {
    case empty
    case scalar(UInt32)
    /// Matches any scalar whose simple case folding is this (already folded) value.
    case foldedScalar(UInt32)
    case set(ScalarSet)
    case assertion(PatternAssertion)
    case sequence([PatternNode])
    case choice([PatternNode])
    /// `max == nil`: unbounded.
    case repetition(PatternNode, min: Int, max: Int?)
}

/// Zero-width tests between two scalars.
enum PatternAssertion: Sendable {
    /// `^`, `\A`
    case textStart
    /// `$`, `\z`
    case textEnd
    /// `\Z`: the end, or just before a line break that ends the text.
    case textEndBeforeFinalNewline
    /// `^` under `(?m)`: the start, or after a line break (not between CR and LF).
    case lineStart
    /// `$` under `(?m)`: the end, or before a line break (not between CR and LF).
    case lineEnd
    case wordBoundary
    case notWordBoundary
}

/// Reads pattern syntax (PCRE's and Swift Regex's common ground) into a
/// ``PatternNode``, refusing what cannot be matched without backtracking
/// (backreferences, lookaround, atomic groups, possessive quantifiers) and
/// what it does not know, with the reason and the position.
struct PatternParser {
    private struct Flags {
        var caseless = false
        var multiline = false
        var dotAll = false
        var extended = false
    }

    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var flags = Flags()
    private var depth = 0

    static func parse(_ source: String) throws(SearchPatternError) -> PatternNode {
        var parser = PatternParser(scalars: Array(source.unicodeScalars))
        let node = try parser.parseAlternation()
        // Only an unmatched ')' stops the top-level alternation early.
        if parser.index < parser.scalars.count { throw parser.error("unmatched ')'") }
        return node
    }

    private init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

    // MARK: Structure

    private mutating func parseAlternation() throws(SearchPatternError) -> PatternNode {
        var branches = [try parseSequence()]
        while peek() == "|" {
            index += 1
            branches.append(try parseSequence())
        }
        return branches.count == 1 ? branches[0] : .choice(branches)
    }

    private mutating func parseSequence() throws(SearchPatternError) -> PatternNode {
        var items: [PatternNode] = []
        while true {
            skipExtendedWhitespace()
            guard let next = peek(), next != "|", next != ")" else { break }
            // nil: a flag setting or a comment, which matches nothing itself.
            guard let atom = try parseAtom() else { continue }
            items.append(try parseQuantifiers(of: atom))
        }
        switch items.count {
        case 0: return .empty
        case 1: return items[0]
        default: return .sequence(items)
        }
    }

    private mutating func parseQuantifiers(of atom: PatternNode) throws(SearchPatternError) -> PatternNode {
        skipExtendedWhitespace()
        guard let (min, max) = try parseQuantifier() else { return atom }
        if peek() == "?" {
            // Lazy: the same texts contain a match, so it is the greedy form here.
            index += 1
        } else if peek() == "+" {
            throw error("possessive quantifiers such as *+ are not supported")
        }
        skipExtendedWhitespace()
        if try quantifierFollows() { throw error("a quantifier cannot follow another; group the first: (?:…)") }
        return .repetition(atom, min: min, max: max)
    }

    /// `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` or `{,n}`; nil (and nothing read)
    /// when there is none: a `{` that does not form one is a literal brace.
    private mutating func parseQuantifier() throws(SearchPatternError) -> (Int, Int?)? {
        let start = index
        switch peek() {
        case "*": index += 1; return (0, nil)
        case "+": index += 1; return (1, nil)
        case "?": index += 1; return (0, 1)
        case "{": break
        default: return nil
        }
        index += 1
        let min = try parseCount()
        var max = min
        if peek() == "," {
            index += 1
            max = try parseCount()
        } else if min == nil {
            index = start
            return nil
        }
        guard peek() == "}", min != nil || max != nil else {
            index = start
            return nil
        }
        index += 1
        if let min, let max, min > max { throw error("repetition {\(min),\(max)} has its bounds in the wrong order", at: start) }
        return (min ?? 0, max)
    }

    private mutating func parseCount() throws(SearchPatternError) -> Int? {
        let start = index
        var value = 0
        while let digit = peek().flatMap({ Self.digitValue($0, radix: 10) }) {
            value = value * 10 + Int(digit)
            if value > SearchPattern.maxRepetition {
                throw error("repetition counts above \(SearchPattern.maxRepetition) are not supported", at: start)
            }
            index += 1
        }
        return index == start ? nil : value
    }

    private mutating func quantifierFollows() throws(SearchPatternError) -> Bool {
        let start = index
        defer { index = start }
        return try parseQuantifier() != nil
    }

    // MARK: Atoms

    private mutating func parseAtom() throws(SearchPatternError) -> PatternNode? {
        let start = index
        let next = scalars[index]
        index += 1
        switch next {
        case "(": return try parseGroup(openedAt: start)
        case "[": return .set(try parseBracket(openedAt: start))
        case ".": return .set(flags.dotAll ? ScalarSet(.any) : ScalarSet(.newline, inverted: true))
        case "^": return .assertion(flags.multiline ? .lineStart : .textStart)
        case "$": return .assertion(flags.multiline ? .lineEnd : .textEnd)
        case "\\": return try parseEscape(startingAt: start)
        case "*", "+", "?":
            throw error("'\(next)' has nothing to repeat", at: start)
        case "{":
            index = start
            if try quantifierFollows() { throw error("'{' has nothing to repeat", at: start) }
            index += 1
            return literal(next.value)
        default:
            return literal(next.value)
        }
    }

    private func literal(_ value: UInt32) -> PatternNode {
        guard flags.caseless, let scalar = Unicode.Scalar(value) else { return .scalar(value) }
        let folded = CaseFolding.fold(value)
        let hasOtherCase = folded != value || CaseFolding.uppercase(scalar) != scalar
        return hasOtherCase ? .foldedScalar(folded) : .scalar(value)
    }

    private mutating func parseGroup(openedAt start: Int) throws(SearchPatternError) -> PatternNode? {
        if peek() == "*" { throw error("backtracking control verbs such as (*ACCEPT) are not supported", at: start) }
        guard depth < SearchPattern.maxNesting else {
            throw error("groups nested more than \(SearchPattern.maxNesting) deep are not supported", at: start)
        }
        let saved = flags
        if peek() == "?" {
            index += 1
            guard let kind = peek() else { throw error("unterminated group", at: start) }
            index += 1
            switch kind {
            case ":", "|":
                break
            case "=", "!":
                throw error("lookahead such as (?=…) is not supported", at: start)
            case "<" where peek() == "=" || peek() == "!":
                throw error("lookbehind such as (?<=…) is not supported", at: start)
            case "<":
                try skipGroupName(until: ">", groupAt: start)
            case "'":
                try skipGroupName(until: "'", groupAt: start)
            case "P" where peek() == "<":
                index += 1
                try skipGroupName(until: ">", groupAt: start)
            case "P" where peek() == "=":
                throw error("backreferences are not supported", at: start)
            case "P" where peek() == ">":
                throw error("recursion and subroutine calls are not supported", at: start)
            case ">":
                throw error("atomic groups (?>…) are not supported", at: start)
            case "(":
                throw error("conditional groups (?(…)…) are not supported", at: start)
            case "#":
                while let next = peek(), next != ")" { index += 1 }
                guard peek() == ")" else { throw error("unterminated comment", at: start) }
                index += 1
                return nil
            case "R", "&", "+", "0"..."9":
                throw error("recursion and subroutine calls are not supported", at: start)
            case "-" where peek().map({ ("0"..."9").contains($0) }) == true:
                throw error("recursion and subroutine calls are not supported", at: start)
            default:
                index -= 1
                if try parseFlags(groupAt: start) { return nil }
            }
        }
        depth += 1
        let body = try parseAlternation()
        depth -= 1
        flags = saved
        guard peek() == ")" else { throw error("missing ')' for the group opened here", at: start) }
        index += 1
        return body
    }

    /// Reads `imsx-…` up to `)` (the flags hold for the rest of the enclosing
    /// group: returns true) or `:` (they hold inside this group: returns false).
    private mutating func parseFlags(groupAt start: Int) throws(SearchPatternError) -> Bool {
        var turningOn = true
        while let next = peek() {
            index += 1
            switch next {
            case ")": return true
            case ":": return false
            case "-": turningOn = false
            case "i": flags.caseless = turningOn
            case "m": flags.multiline = turningOn
            case "s": flags.dotAll = turningOn
            case "x": flags.extended = turningOn
            // Capture and laziness defaults do not change whether a text contains a match.
            case "n", "U": break
            default: throw error("unknown group syntax or flag '\(next)'", at: index - 1)
            }
        }
        throw error("unterminated group", at: start)
    }

    private mutating func skipGroupName(until terminator: Unicode.Scalar, groupAt start: Int) throws(SearchPatternError) {
        let nameStart = index
        while let next = peek(), next == "_" || next.properties.isAlphabetic || next.properties.numericType == .decimal { index += 1 }
        guard index > nameStart, peek() == terminator else { throw error("invalid group name", at: start) }
        index += 1
    }

    // MARK: Escapes

    private mutating func parseEscape(startingAt start: Int) throws(SearchPatternError) -> PatternNode {
        guard let kind = peek() else { throw error("trailing backslash", at: start) }
        index += 1
        if let property = Self.classEscape(kind) { return .set(ScalarSet(property.0, inverted: property.1)) }
        switch kind {
        case "b": return .assertion(.wordBoundary)
        case "B": return .assertion(.notWordBoundary)
        case "A": return .assertion(.textStart)
        case "z": return .assertion(.textEnd)
        case "Z": return .assertion(.textEndBeforeFinalNewline)
        case "R": return .choice([.sequence([.scalar(0x0D), .scalar(0x0A)]), .set(ScalarSet(.newline))])
        case "N" where peek() != "{": return .set(ScalarSet(.newline, inverted: true))
        case "p", "P":
            let (property, inverted) = try parseProperty(negated: kind == "P", escapeAt: start)
            return .set(ScalarSet(property, inverted: inverted))
        case "Q":
            var literals: [PatternNode] = []
            while index < scalars.count {
                if scalars[index] == "\\", index + 1 < scalars.count, scalars[index + 1] == "E" {
                    index += 2
                    break
                }
                literals.append(literal(scalars[index].value))
                index += 1
            }
            return .sequence(literals)
        case "E":
            return .empty
        case "1"..."9", "k", "g":
            throw error("backreferences are not supported", at: start)
        default:
            if let value = try parseScalarEscape(kind, escapeAt: start) { return literal(value) }
            throw error("unknown escape '\\\(kind)'", at: start)
        }
    }

    /// `\d \D \w \W \s \S \h \H \v \V`: the property and whether it is inverted.
    private static func classEscape(_ kind: Unicode.Scalar) -> (ScalarProperty, Bool)? {
        switch kind {
        case "d", "D": return (.digit, kind == "D")
        case "w", "W": return (.word, kind == "W")
        case "s", "S": return (.whitespace, kind == "S")
        case "h", "H": return (.horizontalSpace, kind == "H")
        case "v", "V": return (.newline, kind == "V")
        default: return nil
        }
    }

    /// Escapes that stand for one scalar, inside or outside brackets; nil for
    /// an unknown letter or digit.
    private mutating func parseScalarEscape(_ kind: Unicode.Scalar, escapeAt start: Int) throws(SearchPatternError) -> UInt32? {
        switch kind {
        case "n": return 0x0A
        case "r": return 0x0D
        case "t": return 0x09
        case "f": return 0x0C
        case "a": return 0x07
        case "e": return 0x1B
        case "0":
            var value: UInt32 = 0
            for _ in 0..<2 {
                guard let digit = peek().flatMap({ ("0"..."7").contains($0) ? $0.value - 0x30 : nil }) else { break }
                value = value * 8 + digit
                index += 1
            }
            return value
        case "x": return try parseCodePoint(radix: 16, fixedDigits: 2, escapeAt: start)
        case "u": return try parseCodePoint(radix: 16, fixedDigits: 4, escapeAt: start)
        case "o":
            guard peek() == "{" else { throw error("expected '{' after \\o", at: start) }
            return try parseCodePoint(radix: 8, fixedDigits: nil, escapeAt: start)
        default:
            // Any other escaped punctuation, symbol, space or non-ASCII scalar is itself.
            let isLetterOrDigit = kind.properties.isAlphabetic || kind.properties.numericType != nil
            return isLetterOrDigit && kind.isASCII ? nil : kind.value
        }
    }

    /// `{digits}` in any case, or exactly `fixedDigits` digits.
    private mutating func parseCodePoint(radix: UInt32, fixedDigits: Int?, escapeAt start: Int) throws(SearchPatternError) -> UInt32 {
        let braced = peek() == "{"
        if braced { index += 1 }
        let limit = braced ? Int.max : fixedDigits ?? 0
        var value: UInt32 = 0
        var count = 0
        while count < limit, let next = peek(), let digit = Self.digitValue(next, radix: radix) {
            value = value * radix + digit
            count += 1
            index += 1
            if value > 0x10FFFF { throw error("code point above U+10FFFF", at: start) }
        }
        if braced {
            guard count > 0, peek() == "}" else { throw error("invalid code point escape", at: start) }
            index += 1
        } else if count != limit {
            throw error("expected \(limit) hex digits or {…}", at: start)
        }
        guard Unicode.Scalar(value) != nil else {
            throw error("U+\(String(value, radix: 16, uppercase: true)) is not a Unicode scalar", at: start)
        }
        return value
    }

    private static func digitValue(_ scalar: Unicode.Scalar, radix: UInt32) -> UInt32? {
        guard scalar.isASCII, let digit = UInt32(String(scalar), radix: Int(radix)) else { return nil }
        return digit
    }

    /// After `\p` or `\P`: `{Name}`, `{^Name}` or a one-letter name.
    private mutating func parseProperty(negated: Bool, escapeAt start: Int) throws(SearchPatternError) -> (ScalarProperty, Bool) {
        var inverted = negated
        var name = ""
        if peek() == "{" {
            index += 1
            if peek() == "^" {
                inverted.toggle()
                index += 1
            }
            while let next = peek(), next != "}" {
                name.unicodeScalars.append(next)
                index += 1
            }
            guard peek() == "}" else { throw error("missing '}' in \\p{…}", at: start) }
            index += 1
        } else if let next = peek() {
            name.unicodeScalars.append(next)
            index += 1
        }
        guard let property = ScalarProperty.named(name) else {
            throw error(
                "unknown Unicode property '\(name)' (general categories such as L, Lu, Nd, P work, and Alphabetic, White_Space, Uppercase, Lowercase, Any, ASCII)",
                at: start)
        }
        return (property, inverted)
    }

    // MARK: Bracket expressions

    private enum ClassAtom {
        case scalar(UInt32)
        case item(ScalarSet.Item)
    }

    private mutating func parseBracket(openedAt start: Int) throws(SearchPatternError) -> ScalarSet {
        var negated = false
        if peek() == "^" {
            negated = true
            index += 1
        }
        var items: [ScalarSet.Item] = []
        var isFirst = true
        while true {
            guard let next = peek() else { throw error("missing ']' for the class opened here", at: start) }
            if next == "]", !isFirst {
                index += 1
                break
            }
            isFirst = false
            if ["&", "-", "~"].contains(next), peek(1) == next {
                throw error("class set operations (&&, --, ~~) are not supported; escape the character to mean it")
            }
            if next == "[" {
                guard peek(1) == ":" else { throw error("write \\[ for a '[' inside a class (nested classes are not supported)") }
                items.append(try parsePosixClass())
                continue
            }
            let atomStart = index
            let low = try parseClassAtom()
            if peek() == "-", peek(1) == "-" {
                throw error("class set operations (&&, --, ~~) are not supported; escape the character to mean it")
            }
            // A '-' after a class escape such as \w, or before ']', is itself.
            guard case .scalar(let lowValue) = low, peek() == "-", let after = peek(1), after != "]" else {
                switch low {
                case .scalar(let value): items.append(.range(value...value))
                case .item(let item): items.append(item)
                }
                continue
            }
            index += 1
            guard case .scalar(let highValue) = try parseClassAtom() else { throw error("invalid range in class", at: atomStart) }
            guard lowValue <= highValue else { throw error("range out of order in class", at: atomStart) }
            items.append(.range(lowValue...highValue))
        }
        return ScalarSet(items, negated: negated, caseless: flags.caseless)
    }

    private mutating func parseClassAtom() throws(SearchPatternError) -> ClassAtom {
        let start = index
        let next = scalars[index]
        index += 1
        guard next == "\\" else { return .scalar(next.value) }
        guard let kind = peek() else { throw error("trailing backslash", at: start) }
        index += 1
        if let (property, inverted) = Self.classEscape(kind) { return .item(.property(property, inverted: inverted)) }
        switch kind {
        case "b": return .scalar(0x08)
        case "p", "P":
            let (property, inverted) = try parseProperty(negated: kind == "P", escapeAt: start)
            return .item(.property(property, inverted: inverted))
        default:
            if let value = try parseScalarEscape(kind, escapeAt: start) { return .scalar(value) }
            throw error("unknown escape '\\\(kind)' in a class", at: start)
        }
    }

    /// `[:name:]` or `[:^name:]`, at the `[`.
    private mutating func parsePosixClass() throws(SearchPatternError) -> ScalarSet.Item {
        let start = index
        index += 2
        var inverted = false
        if peek() == "^" {
            inverted = true
            index += 1
        }
        var name = ""
        while let next = peek(), next != ":" {
            name.unicodeScalars.append(next)
            index += 1
        }
        guard peek() == ":", peek(1) == "]", let property = ScalarProperty.posix(name) else {
            throw error("unknown POSIX class '[:\(name):]'", at: start)
        }
        index += 2
        return .property(property, inverted: inverted)
    }

    // MARK: Reading

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        index + ahead < scalars.count ? scalars[index + ahead] : nil
    }

    /// Under `(?x)`, whitespace and `#` comments between atoms are ignored.
    private mutating func skipExtendedWhitespace() {
        guard flags.extended else { return }
        while let next = peek() {
            if next.properties.isWhitespace {
                index += 1
            } else if next == "#" {
                while let skipped = peek(), !ScalarProperty.isNewline(skipped.value) { index += 1 }
            } else {
                return
            }
        }
    }

    private func error(_ reason: String, at position: Int? = nil) -> SearchPatternError {
        SearchPatternError(reason: reason, offset: position ?? index)
    }
}
