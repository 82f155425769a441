/// Small text utilities shared by the commands.
public enum Text {
    /// Decodes bytes as UTF-8, refusing invalid sequences instead of repairing them.
    public static func decodeUTF8(_ bytes: [UInt8]) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// "1 tab", "2 tabs", "0 tabs": a count with its noun (regular plurals only).
    public static func counted(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    public static func isBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.properties.isWhitespace }
    }

    /// One line: whitespace runs collapsed to a space, cut at `limit` characters with "…".
    public static func preview(_ text: String, limit: Int) -> String {
        var result = ""
        var pendingSpace = false
        var count = 0
        for character in text {
            if character.isWhitespace {
                pendingSpace = count > 0
                continue
            }
            if pendingSpace {
                if count + 1 >= limit { return result + "…" }
                result.append(" ")
                count += 1
                pendingSpace = false
            }
            if count + 1 > limit - 1, count >= limit - 1 { return result + "…" }
            result.append(character)
            count += 1
        }
        return result
    }

    /// A name read from a file, as an error message quotes it (see `escapingControls`).
    public static func quoted(_ name: String, limit: Int = 80) -> String {
        "'" + escapingControls(name, limit: limit) + "'"
    }

    /// Text a peer controls, made safe for a message: control characters (NUL, ESC, newlines) shown
    /// as `\u{…}` escapes, cut at `limit` characters with "…".
    public static func escapingControls(_ text: String, limit: Int) -> String {
        var result = ""
        for (count, scalar) in text.unicodeScalars.enumerated() {
            if count == limit { return result + "…" }
            if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The first line, trimmed, cut to `limit` characters: Itsypad's tab title rule.
    public static func firstLineTitle(_ text: String, limit: Int = 30) -> String? {
        let line = text.split(whereSeparator: \.isNewline).first { !isBlank(String($0)) }
        guard let line else { return nil }
        let trimmed = trim(String(line))
        return trimmed.isEmpty ? nil : String(trimmed.prefix(limit))
    }

    public static func trim(_ text: String) -> String {
        var scalars = Substring(text)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }

    /// Edit distance, for "Did you mean …?" suggestions.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The closest candidate within a small distance, or one that starts with `word`.
    public static func suggestion(for word: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word, $0)) }.sorted { $0.1 < $1.1 }
        if let best = scored.first, best.1 <= max(2, word.count / 3) { return best.0 }
        return candidates.first { $0.hasPrefix(word) && !word.isEmpty }
    }

    /// Lines wrapped at `width` columns, each prefixed by `indent`.
    public static func wrap(_ text: String, width: Int, indent: Int = 0, firstIndent: Int? = nil) -> String {
        var lines: [String] = []
        var line = String(repeating: " ", count: firstIndent ?? indent)
        var lineHasWord = false
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if lineHasWord, line.count + 1 + word.count > width {
                lines.append(line)
                line = String(repeating: " ", count: indent)
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
