import ItsypadModel
import ItsypadSupport

// Tab files are read without the decoder: a first sync, `tab ls` without an index, import and
// export read every one, and parsing a whole `JSONValue` then running `JSONCoding`'s decoder
// over it was most of that work. They are read straight from their bytes (see `JSONReader`),
// giving what `TabStore.decoded` gives, or nil to leave the file to it, which then decides (and
// says what is wrong). `TabFileReadingTests` checks both agree on valid files and on every
// one-member mutation of them. `TabFile` and `TabDeletionFile` stay the definition of the format.

extension TabStore {
    /// The entry and stamp `decoded(_:path:)` gives for `bytes`, read straight from them; nil
    /// where the reader cannot be sure of that (an odd member, a file the decoder refuses).
    static func read(_ bytes: [UInt8]) -> (entry: Entry, stamp: String?)? {
        bytes.withUnsafeBufferPointer { JSONReader.read($0, TabFileMembers.init(reader:)) }?.entry
    }
}

/// The members of a tab file or of a tab deletion file, in one pass: optional ones absent or
/// null are nil, as the decoder reads them. A member of an unexpected type fails the read.
private struct TabFileMembers {
    var id: String?, name: String?, language: String?, clock: String?, lastModified: Int64?
    var nameLocked: Bool?, languageLocked: Bool?, deleted: Bool?
    var nameClock: String?, languageClock: String?, fileURL: String?, content: String?, stamp: String?, tag: String?
    var sync: TabFile.Sync?
    var history: [String]?

    init?(reader: inout JSONReader) {
        var members = TabFileMembers()
        let read = reader.object { reader, key in
            switch key {
            case "id": return reader.optional(&members.id) { $0.string() }
            case "name": return reader.optional(&members.name) { $0.string() }
            case "nameLocked": return reader.optional(&members.nameLocked) { $0.bool() }
            case "language": return reader.optional(&members.language) { $0.string() }
            case "languageLocked": return reader.optional(&members.languageLocked) { $0.bool() }
            case "lastModified": return reader.optional(&members.lastModified) { $0.int64() }
            case "clock": return reader.optional(&members.clock) { $0.string() }
            case "nameClock": return reader.optional(&members.nameClock) { $0.string() }
            case "languageClock": return reader.optional(&members.languageClock) { $0.string() }
            case "fileURL": return reader.optional(&members.fileURL) { $0.string() }
            case "content": return reader.optional(&members.content) { $0.string() }
            case "stamp": return reader.optional(&members.stamp) { $0.string() }
            case "sync": return reader.optional(&members.sync) { TabFile.Sync(reader: &$0) }
            case "history": return reader.optional(&members.history) { $0.strings() }
            case "deleted": return reader.optional(&members.deleted) { $0.bool() }
            case "tag": return reader.optional(&members.tag) { $0.string() }
            default: return reader.skip()
            }
        }
        guard read else { return nil }
        self = members
    }

    private init() {}

    /// The entry, as `TabStore.decoded` makes it: a deletion where `deleted` is true, else a tab.
    /// nil where the decoder would refuse the file (a required member missing, an invalid id).
    var entry: (entry: TabStore.Entry, stamp: String?)? {
        guard let id else { return nil }
        if deleted == true {
            return TabDeletionFile(id: id, deleted: true, tag: tag, history: history).deletion.map { (.deleted($0), nil) }
        }
        guard let name, let language, let lastModified, let clock else { return nil }
        let file = TabFile(
            id: id, name: name, nameLocked: nameLocked, language: language, languageLocked: languageLocked, lastModified: lastModified,
            clock: clock, nameClock: nameClock, languageClock: languageClock, fileURL: fileURL, content: content, stamp: stamp, sync: sync,
            history: history)
        return file.tab.map { (.live($0), stamp) }
    }
}

extension TabFile.Sync {
    init?(reader: inout JSONReader) {
        var tag: String?, ancestor: String?, clock: String?
        let read = reader.object { reader, key in
            switch key {
            case "tag": tag = reader.string(); return tag != nil
            case "ancestor": ancestor = reader.string(); return ancestor != nil
            case "clock": return reader.optional(&clock) { $0.string() }
            default: return reader.skip()
            }
        }
        guard read, let tag, let ancestor else { return nil }
        self.init(tag: tag, ancestor: ancestor, clock: clock)
    }
}

extension JSONReader {
    /// Reads an optional member's value into `value` as the decoder does: null is nil, anything
    /// else must read with `read`. False when it does not.
    fileprivate mutating func optional<Value>(_ value: inout Value?, _ read: (inout JSONReader) -> Value?) -> Bool {
        if null() {
            value = nil
            return true
        }
        value = read(&self)
        return value != nil
    }

    /// An array of strings, as the decoder reads `[String]`.
    fileprivate mutating func strings() -> [String]? {
        var strings: [String] = []
        let read = array { reader in
            guard let string = reader.string() else { return false }
            strings.append(string)
            return true
        }
        return read ? strings : nil
    }
}
