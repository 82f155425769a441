/// A line-based three-way merge (diff3): changes that touch different lines of
/// the common ancestor combine; changes to the same lines conflict.
public enum ThreeWayMerge {
    public enum Outcome: Equatable, Sendable {
        case merged(String)
        case conflict
    }

    /// Beyond this many comparison cells the merge gives up and reports a
    /// conflict: the caller then keeps both versions, which loses nothing.
    static let maxCells = 4_000_000

    public static func merge(ancestor: String, local: String, remote: String) -> Outcome {
        if local == remote { return .merged(local) }
        if local == ancestor { return .merged(remote) }
        if remote == ancestor { return .merged(local) }
        let base = lines(ancestor), mine = lines(local), theirs = lines(remote)
        guard let toMine = matching(base, mine), let toTheirs = matching(base, theirs) else { return .conflict }

        var result: [Substring] = []
        var (o, a, b) = (0, 0, 0)
        while true {
            // The next ancestor line both sides kept: everything before it is one chunk.
            var stable = o
            while stable < base.count, toMine[stable] == nil || toTheirs[stable] == nil { stable += 1 }
            let (endA, endB) = stable < base.count ? (toMine[stable]!, toTheirs[stable]!) : (mine.count, theirs.count)
            if stable > o || endA > a || endB > b {
                let original = base[o..<stable], left = mine[a..<endA], right = theirs[b..<endB]
                if left.elementsEqual(original) {
                    result += right
                } else if right.elementsEqual(original) || left.elementsEqual(right) {
                    result += left
                } else {
                    return .conflict
                }
            }
            guard stable < base.count else { break }
            result.append(base[stable])
            (o, a, b) = (stable + 1, endA + 1, endB + 1)
        }
        return .merged(result.joined(separator: "\n"))
    }

    static func lines(_ text: String) -> [Substring] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
    }

    /// For each ancestor line, the index of the line it matches in `other`
    /// (a longest common subsequence), or nil where it was changed or removed.
    static func matching(_ base: [Substring], _ other: [Substring]) -> [Int?]? {
        var result = [Int?](repeating: nil, count: base.count)
        var prefix = 0
        while prefix < base.count, prefix < other.count, base[prefix] == other[prefix] {
            result[prefix] = prefix
            prefix += 1
        }
        var suffix = 0
        while suffix < base.count - prefix, suffix < other.count - prefix,
            base[base.count - 1 - suffix] == other[other.count - 1 - suffix]
        {
            result[base.count - 1 - suffix] = other.count - 1 - suffix
            suffix += 1
        }
        let n = base.count - prefix - suffix, m = other.count - prefix - suffix
        guard n > 0, m > 0 else { return result }
        guard n * m <= maxCells else { return nil }
        // Classic LCS table over the differing middle, walked back to pair lines.
        let width = m + 1
        var table = [Int32](repeating: 0, count: (n + 1) * width)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                table[i * width + j] =
                    base[prefix + i] == other[prefix + j]
                    ? table[(i + 1) * width + j + 1] + 1
                    : max(table[(i + 1) * width + j], table[i * width + j + 1])
            }
        }
        var (i, j) = (0, 0)
        while i < n, j < m {
            if base[prefix + i] == other[prefix + j] {
                result[prefix + i] = prefix + j
                i += 1
                j += 1
            } else if table[(i + 1) * width + j] >= table[i * width + j + 1] {
                i += 1
            } else {
                j += 1
            }
        }
        return result
    }
}
