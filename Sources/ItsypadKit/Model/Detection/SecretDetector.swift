/// Spots credentials (private keys, cloud and API tokens) in text so the app
/// can avoid keeping them in clipboard history or showing them in full.
///
/// Matching is by well-known token shapes only, never by entropy, so that
/// hashes, UUIDs and prose are not flagged. Like ``LanguageDetector`` it runs
/// on every clipboard add, so it scans raw bytes of the first
/// ``scanLimit`` bytes only.
public enum SecretDetector {
    /// How many bytes of the text are examined.
    public static let scanLimit = 8 * 1024

    /// Returns `true` when `text` contains something shaped like a secret: a
    /// PEM private key, an AWS access key id, a GitHub, Slack, Stripe, OpenAI,
    /// Google or npm token, or a JWT. Tokens must stand as whole words, not
    /// be part of a longer alphanumeric run.
    public static func looksSecret(_ text: String) -> Bool {
        let bytes = Array(text.utf8.prefix(scanLimit))[...]
        if containsPrivateKeyBlock(bytes) { return true }
        for start in bytes.indices where mayStartToken[Int(bytes[start])] {
            if start > 0, bytes[start - 1].isASCIIAlphanumeric { continue }
            if tokenRules.contains(where: { $0.matches(bytes, at: start) }) { return true }
            if isJWT(bytes, at: start) { return true }
        }
        return false
    }
}

extension SecretDetector {
    /// The characters a token body may consist of.
    enum TokenAlphabet: Sendable {
        /// `A-Z0-9`, as in AWS key ids.
        case upperAlphanumeric
        /// `A-Za-z0-9`.
        case alphanumeric
        /// `A-Za-z0-9_`.
        case word
        /// `A-Za-z0-9-`, as in Slack tokens.
        case alphanumericDash
        /// `A-Za-z0-9_-`, the base64url alphabet.
        case base64URL

        func contains(_ b: UInt8) -> Bool {
            switch self {
            case .upperAlphanumeric: b.isASCIIUppercase || b.isASCIIDigit
            case .alphanumeric: b.isASCIIAlphanumeric
            case .word: b.isIdentifierByte
            case .alphanumericDash: b.isASCIIAlphanumeric || b == .dash
            case .base64URL: b.isIdentifierByte || b == .dash
            }
        }
    }

    /// A token that is a fixed prefix followed by a body of known alphabet and length.
    struct TokenRule: Sendable {
        let prefixes: [StaticString]
        let body: TokenAlphabet
        let length: ClosedRange<Int>
        /// Whether the body must contain a digit. Set where the prefix also
        /// starts ordinary kebab-case words (`sk-learn-…`, `xoxb-token-here`);
        /// real tokens of those kinds always carry digits.
        let needsDigit: Bool

        init(_ prefixes: [StaticString], _ body: TokenAlphabet, _ length: ClosedRange<Int>, needsDigit: Bool = false) {
            self.prefixes = prefixes
            self.body = body
            self.length = length
            self.needsDigit = needsDigit
        }

        /// The body is read greedily, so an over-long run fails an exact length,
        /// and the byte after it must not be alphanumeric (whole-word rule).
        func matches(_ bytes: ArraySlice<UInt8>, at start: Int) -> Bool {
            for prefix in prefixes where bytes.hasBytes(prefix, at: start) {
                let bodyStart = start + prefix.utf8CodeUnitCount
                var end = bodyStart
                while end < bytes.endIndex, body.contains(bytes[end]) { end += 1 }
                let bodyLength = end - bodyStart
                let endsWord = end == bytes.endIndex || !bytes[end].isASCIIAlphanumeric
                let hasDigit = !needsDigit || bytes[bodyStart..<end].contains(where: \.isASCIIDigit)
                if length.contains(bodyLength) && endsWord && hasDigit { return true }
            }
            return false
        }
    }
}

extension SecretDetector {
    static let tokenRules: [TokenRule] = [
        TokenRule(["AKIA", "ASIA"], .upperAlphanumeric, 16...16),
        TokenRule(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], .alphanumeric, 36...36),
        TokenRule(["github_pat_"], .word, 22...Int.max),
        // Slack bodies are dash-separated numbers and a random tail; requiring
        // some length keeps a bare mention of the `xoxb-` prefix harmless.
        TokenRule(["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"], .alphanumericDash, 10...Int.max, needsDigit: true),
        TokenRule(["sk_live_", "rk_live_"], .alphanumeric, 20...Int.max),
        TokenRule(["sk-"], .base64URL, 32...Int.max, needsDigit: true),
        TokenRule(["AIza"], .base64URL, 35...35),
        TokenRule(["npm_"], .alphanumeric, 36...36),
    ]

    /// Bytes that can begin a token, so most positions are skipped with one lookup.
    static let mayStartToken: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for rule in tokenRules {
            for prefix in rule.prefixes { prefix.withUTF8Buffer { table[Int($0[0])] = true } }
        }
        table[Int(UInt8(ascii: "e"))] = true  // `eyJ`, the start of a JWT
        return table
    }()

    /// `eyJ…`.`…`.`…`: a JSON header (`{"` encodes as `eyJ`), payload and
    /// signature, each at least 10 base64url characters.
    static func isJWT(_ bytes: ArraySlice<UInt8>, at start: Int) -> Bool {
        guard bytes.hasBytes("eyJ", at: start) else { return false }
        var position = start
        for segment in 0..<3 {
            if segment > 0 {
                guard position < bytes.endIndex, bytes[position] == .dot else { return false }
                position += 1
            }
            let segmentStart = position
            while position < bytes.endIndex, TokenAlphabet.base64URL.contains(bytes[position]) { position += 1 }
            guard position - segmentStart >= 10 else { return false }
        }
        return position == bytes.endIndex || !bytes[position].isASCIIAlphanumeric
    }

    /// `-----BEGIN … PRIVATE KEY-----` in any flavour (RSA, EC, OPENSSH,
    /// ENCRYPTED, PGP … KEY BLOCK). Public keys and certificates are not secret.
    static func containsPrivateKeyBlock(_ bytes: ArraySlice<UInt8>) -> Bool {
        let begin: StaticString = "-----BEGIN "
        var rest = bytes
        while let found = rest.firstIndex(of: begin) {
            let labelStart = found + begin.utf8CodeUnitCount
            let label = bytes[labelStart...].prefix { $0.isASCIIUppercase || $0.isASCIIDigit || $0 == .space }
            let closes = bytes.hasBytes("-----", at: labelStart + label.count)
            if closes && label.contains("PRIVATE KEY") { return true }
            rest = bytes[labelStart...]
        }
        return false
    }
}
