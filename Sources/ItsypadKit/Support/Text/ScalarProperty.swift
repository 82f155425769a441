/// A named class of Unicode scalars: what `\d`, `\w`, `\p{Lu}` or `[:alpha:]`
/// stand for in a ``SearchPattern``. Definitions follow Unicode Technical
/// Standard #18 (simple level), on scalars rather than grapheme clusters.
enum ScalarProperty: Sendable, Equatable {
    case any
    case ascii
    /// `\d`: decimal digits in any script (general category Nd).
    case digit
    /// `\w`: letters, marks, decimal digits and connector punctuation (`_`).
    case word
    /// `\s`: the White_Space property.
    case whitespace
    /// `\h`: tab and space separators.
    case horizontalSpace
    /// `\v`: line breaks (`.` stops at these, `(?m)` anchors match around them).
    case newline
    case alphabetic
    case uppercase
    case lowercase
    case hexDigit
    case categories([Unicode.GeneralCategory])

    func contains(_ scalar: Unicode.Scalar) -> Bool {
        switch self {
        case .any: return true
        case .ascii: return scalar.isASCII
        case .digit: return scalar.properties.generalCategory == .decimalNumber
        case .word:
            let properties = scalar.properties
            switch properties.generalCategory {
            case .decimalNumber, .connectorPunctuation, .nonspacingMark, .spacingMark, .enclosingMark: return true
            default: return properties.isAlphabetic
            }
        case .whitespace: return scalar.properties.isWhitespace
        case .horizontalSpace: return scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
        case .newline: return ScalarProperty.isNewline(scalar.value)
        case .alphabetic: return scalar.properties.isAlphabetic
        case .uppercase: return scalar.properties.isUppercase
        case .lowercase: return scalar.properties.isLowercase
        case .hexDigit: return scalar.properties.isASCIIHexDigit
        case .categories(let categories): return categories.contains(scalar.properties.generalCategory)
        }
    }

    /// Line breaks: LF, VT, FF, CR, NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR.
    static func isNewline(_ value: UInt32) -> Bool {
        (0x0A...0x0D).contains(value) || value == 0x85 || value == 0x2028 || value == 0x2029
    }

    static func isWord(_ value: UInt32) -> Bool {
        if value < 0x80 { return asciiWord[Int(value)] }
        return Unicode.Scalar(value).map(ScalarProperty.word.contains) ?? false
    }

    private static let asciiWord: [Bool] = (0..<128).map { ScalarProperty.word.contains(Unicode.Scalar(UInt8($0))) }

    /// `\p{…}` names: general categories (short and long names, `L&`), a few
    /// binary properties, `Any` and `ASCII`. Matched loosely, as UTS #18 asks:
    /// case, spaces, `-` and `_` are ignored.
    static func named(_ name: String) -> ScalarProperty? {
        let key = String(name.lowercased().unicodeScalars.filter { $0 != " " && $0 != "-" && $0 != "_" })
        if let property = binaryProperties[key] { return property }
        return categoryNames[key].map(ScalarProperty.categories)
    }

    /// `[:name:]` inside a bracket expression.
    static func posix(_ name: String) -> ScalarProperty? {
        switch name {
        case "alpha": return .alphabetic
        case "digit": return .digit
        case "alnum": return .categories(letters + [.decimalNumber])
        case "upper": return .uppercase
        case "lower": return .lowercase
        case "space": return .whitespace
        case "blank": return .horizontalSpace
        case "punct": return .categories(punctuation)
        case "cntrl": return .categories([.control])
        case "xdigit": return .hexDigit
        case "word": return .word
        case "ascii": return .ascii
        default: return nil
        }
    }

    private static let binaryProperties: [String: ScalarProperty] = [
        "any": .any, "ascii": .ascii, "alphabetic": .alphabetic, "alpha": .alphabetic,
        "whitespace": .whitespace, "space": .whitespace, "uppercase": .uppercase, "upper": .uppercase,
        "lowercase": .lowercase, "lower": .lowercase,
    ]

    private static let letters: [Unicode.GeneralCategory] = [
        .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
    ]
    private static let punctuation: [Unicode.GeneralCategory] = [
        .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
        .initialPunctuation, .finalPunctuation, .otherPunctuation,
    ]

    private static let categoryNames: [String: [Unicode.GeneralCategory]] = {
        let groups: [([String], [Unicode.GeneralCategory])] = [
            (["l", "letter"], letters),
            (["l&", "lc", "casedletter"], [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter]),
            (["lu", "uppercaseletter"], [.uppercaseLetter]),
            (["ll", "lowercaseletter"], [.lowercaseLetter]),
            (["lt", "titlecaseletter"], [.titlecaseLetter]),
            (["lm", "modifierletter"], [.modifierLetter]),
            (["lo", "otherletter"], [.otherLetter]),
            (["m", "mark", "combiningmark"], [.nonspacingMark, .spacingMark, .enclosingMark]),
            (["mn", "nonspacingmark"], [.nonspacingMark]),
            (["mc", "spacingmark"], [.spacingMark]),
            (["me", "enclosingmark"], [.enclosingMark]),
            (["n", "number"], [.decimalNumber, .letterNumber, .otherNumber]),
            (["nd", "decimalnumber", "digit"], [.decimalNumber]),
            (["nl", "letternumber"], [.letterNumber]),
            (["no", "othernumber"], [.otherNumber]),
            (["p", "punctuation", "punct"], punctuation),
            (["pc", "connectorpunctuation"], [.connectorPunctuation]),
            (["pd", "dashpunctuation"], [.dashPunctuation]),
            (["ps", "openpunctuation"], [.openPunctuation]),
            (["pe", "closepunctuation"], [.closePunctuation]),
            (["pi", "initialpunctuation"], [.initialPunctuation]),
            (["pf", "finalpunctuation"], [.finalPunctuation]),
            (["po", "otherpunctuation"], [.otherPunctuation]),
            (["s", "symbol"], [.mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol]),
            (["sm", "mathsymbol"], [.mathSymbol]),
            (["sc", "currencysymbol"], [.currencySymbol]),
            (["sk", "modifiersymbol"], [.modifierSymbol]),
            (["so", "othersymbol"], [.otherSymbol]),
            (["z", "separator"], [.spaceSeparator, .lineSeparator, .paragraphSeparator]),
            (["zs", "spaceseparator"], [.spaceSeparator]),
            (["zl", "lineseparator"], [.lineSeparator]),
            (["zp", "paragraphseparator"], [.paragraphSeparator]),
            (["c", "other"], [.control, .format, .surrogate, .privateUse, .unassigned]),
            (["cc", "control", "cntrl"], [.control]),
            (["cf", "format"], [.format]),
            (["cs", "surrogate"], [.surrogate]),
            (["co", "privateuse"], [.privateUse]),
            (["cn", "unassigned"], [.unassigned]),
        ]
        var names: [String: [Unicode.GeneralCategory]] = [:]
        for (keys, categories) in groups { for key in keys { names[key] = categories } }
        return names
    }()
}

/// Simple (one scalar to one scalar) case mappings: `(?i)` compares scalars
/// by their folded form, so `k`, `K` and the Kelvin sign match each other
/// while `ß` does not match `SS`.
enum CaseFolding {
    static func fold(_ value: UInt32) -> UInt32 {
        if value < 0x80 { return (0x41...0x5A).contains(value) ? value + 0x20 : value }
        guard let scalar = Unicode.Scalar(value) else { return value }
        return lowercase(uppercase(scalar)).value
    }

    static func lowercase(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        single(scalar.properties.lowercaseMapping) ?? scalar
    }

    static func uppercase(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        single(scalar.properties.uppercaseMapping) ?? scalar
    }

    private static func single(_ mapping: String) -> Unicode.Scalar? {
        var scalars = mapping.unicodeScalars.makeIterator()
        guard let first = scalars.next(), scalars.next() == nil else { return nil }
        return first
    }
}

/// A bracket expression, `.`, or a class escape, compiled for matching: a
/// bitmap answers ASCII scalars in one test; others go through sorted ranges
/// (binary search) and properties.
final class ScalarSet: Sendable {
    enum Item: Sendable, Equatable {
        case range(ClosedRange<UInt32>)
        case property(ScalarProperty, inverted: Bool)
    }

    /// Membership of the 128 ASCII scalars: bit n of `asciiLow` is scalar n,
    /// bit n of `asciiHigh` scalar 64 + n.
    let asciiLow: UInt64
    let asciiHigh: UInt64
    private let rule: Rule

    init(_ items: [Item], negated: Bool = false, caseless: Bool = false) {
        var ranges: [ClosedRange<UInt32>] = []
        var properties: [(ScalarProperty, Bool)] = []
        for item in items {
            switch item {
            case .range(let range): ranges.append(range)
            case .property(let property, let inverted): properties.append((property, inverted))
            }
        }
        let rule = Rule(ranges: Rule.merged(ranges), properties: properties, negated: negated, caseless: caseless)
        var low: UInt64 = 0, high: UInt64 = 0
        for value in UInt32(0)..<128 where rule.contains(value) {
            if value < 64 { low |= 1 << UInt64(value) } else { high |= 1 << UInt64(value - 64) }
        }
        self.rule = rule
        asciiLow = low
        asciiHigh = high
    }

    /// A single property, such as `\d` or `\W` outside brackets.
    convenience init(_ property: ScalarProperty, inverted: Bool = false) {
        self.init([.property(property, inverted: inverted)])
    }

    func contains(_ value: UInt32) -> Bool {
        if value < 64 { return asciiLow & (1 << UInt64(value)) != 0 }
        if value < 128 { return asciiHigh & (1 << UInt64(value - 64)) != 0 }
        return rule.contains(value)
    }

    private struct Rule: Sendable {
        let ranges: [ClosedRange<UInt32>]
        let properties: [(ScalarProperty, Bool)]
        let negated: Bool
        let caseless: Bool

        func contains(_ value: UInt32) -> Bool {
            guard let scalar = Unicode.Scalar(value) else { return negated }
            var found = matchesItems(scalar)
            if !found, caseless {
                found = matchesItems(CaseFolding.lowercase(scalar)) || matchesItems(CaseFolding.uppercase(scalar))
            }
            return found != negated
        }

        private func matchesItems(_ scalar: Unicode.Scalar) -> Bool {
            inRanges(scalar.value) || properties.contains { $0.0.contains(scalar) != $0.1 }
        }

        private func inRanges(_ value: UInt32) -> Bool {
            var low = 0, high = ranges.count
            while low < high {
                let middle = (low + high) / 2
                if ranges[middle].upperBound < value { low = middle + 1 } else { high = middle }
            }
            return low < ranges.count && ranges[low].contains(value)
        }

        static func merged(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
            var result: [ClosedRange<UInt32>] = []
            for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if let last = result.last, range.lowerBound <= last.upperBound &+ 1 {
                    result[result.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
                } else {
                    result.append(range)
                }
            }
            return result
        }
    }
}
