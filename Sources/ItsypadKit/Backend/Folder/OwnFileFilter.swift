import ItsypadModel

/// The records this device may hold a record file of, while this backend knows every one: from a
/// journal line whose digest names no record file (or an empty journal), each record of every line
/// this backend commits after it. A push then reads no file of its own for a record it never wrote:
/// a first push of 10,000 tabs made 10,000 opens that failed. One bit a hash of the record's id:
/// "none" is certain, "maybe" is not (a read then finds no file). Its size is fixed, whatever the history's.
struct OwnFileFilter {
    /// 256 KiB: under one record in eight shares a bit with another at 250,000 records.
    static let bits = 1 << 21

    /// The last line of the journal it accounts for.
    private(set) var through: Int64
    private var words: [UInt64]

    /// No record file, as of the journal's line `through` (0: an empty journal).
    init(through: Int64) {
        self.through = through
        words = [UInt64](repeating: 0, count: Self.bits / 64)
    }

    /// Whether this device may hold a record file of `id`.
    func mayHold(_ id: RecordID) -> Bool {
        let bit = Self.bit(id)
        return words[bit >> 6] & (1 << UInt64(bit & 63)) != 0
    }

    /// The records of `batch`, the line after `through`, committed.
    mutating func add(_ batch: DeviceBatch) {
        for change in batch.changes where change.op != .checkpoint {
            let bit = Self.bit(change.id)
            words[bit >> 6] |= 1 << UInt64(bit & 63)
        }
        through = batch.lastSeq
    }

    private static func bit(_ id: RecordID) -> Int { Int(UInt(bitPattern: id.hashValue) % UInt(bits)) }
}
