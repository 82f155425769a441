import ItsypadSupport

// Journal lines are read without the decoder, as record files are (see `VersionDocument+Reading`):
// a first push reads back every line it wrote (its fetch, its sweep of tombstones, its compaction)
// and a joining device reads every line of every device. Each reader gives what `JSONCoding.decode`
// gives, or nil to leave the line to the decoder, which then decides. `DeviceBatchReadingTests`
// checks both agree on valid lines and on every one-member mutation of them.

extension DeviceBatch {
    /// `JSONCoding.decode(DeviceBatch.self, from: bytes)`, or nil where that throws.
    static func read(_ bytes: ArraySlice<UInt8>) -> DeviceBatch? {
        if let batch = bytes.withUnsafeBufferPointer({ JSONReader.read($0, DeviceBatch.init(reader:)) }) { return batch }
        return try? JSONCoding.decode(DeviceBatch.self, from: Array(bytes))
    }

    init?(reader: inout JSONReader) {
        var seq: Int64?, device: String?, instance: String?, zone: String?, time: Int64?, files: String?
        var changes: [DeviceChange]?
        let read = reader.object { reader, key in
            switch key {
            case "seq": seq = reader.int64(); return seq != nil
            case "device": device = reader.string(); return device != nil
            case "instance": instance = reader.string(); return instance != nil
            case "zone": zone = reader.string(); return zone != nil
            case "time": time = reader.int64(); return time != nil
            case "files": files = reader.string(); return files != nil
            case "changes":
                var list: [DeviceChange] = []
                guard reader.array({ reader in DeviceChange(reader: &reader).map { list.append($0) } != nil }) else { return false }
                changes = list
                return true
            default: return reader.skip()
            }
        }
        guard read, let seq, let device, let instance, let zone, let time, let changes, let files else { return nil }
        self.init(seq: seq, device: device, instance: instance, zone: zone, time: time, changes: changes, files: files)
    }
}

extension DeviceChange {
    init?(reader: inout JSONReader) {
        var seq: Int64?, op: Operation?, recordType: String?, recordName: String?
        var version: VersionDocument?, drop: DropDocument?, checkpoint: CheckpointDocument?
        let read = reader.object { reader, key in
            switch key {
            case "seq": seq = reader.int64(); return seq != nil
            case "op": op = reader.plainString().flatMap { Operation(rawValue: $0.string) }; return op != nil
            case "recordType":
                if reader.null() { return true }
                recordType = reader.string()
                return recordType != nil
            case "recordName":
                if reader.null() { return true }
                recordName = reader.string()
                return recordName != nil
            case "version":
                if reader.null() { return true }
                version = VersionDocument(reader: &reader)
                return version != nil
            case "drop":
                if reader.null() { return true }
                drop = DropDocument(reader: &reader)
                return drop != nil
            case "checkpoint":
                if reader.null() { return true }
                checkpoint = CheckpointDocument(reader: &reader)
                return checkpoint != nil
            default: return reader.skip()
            }
        }
        guard read, let seq, let op else { return nil }
        self.init(seq: seq, op: op, recordType: recordType, recordName: recordName, version: version, drop: drop, checkpoint: checkpoint)
    }
}

extension DropDocument {
    init?(reader: inout JSONReader) {
        var version: String?, coveredBy: JournalSource?
        let read = reader.object { reader, key in
            switch key {
            case "version": version = reader.string(); return version != nil
            case "coveredBy":
                if reader.null() { return true }
                coveredBy = JournalSource(reader: &reader)
                return coveredBy != nil
            default: return reader.skip()
            }
        }
        guard read, let version else { return nil }
        self.init(version: version, coveredBy: coveredBy)
    }
}

extension JournalSource {
    init?(reader: inout JSONReader) {
        var device: String?, seq: Int64?
        let read = reader.object { reader, key in
            switch key {
            case "device": device = reader.string(); return device != nil
            case "seq": seq = reader.int64(); return seq != nil
            default: return reader.skip()
            }
        }
        guard read, let device, let seq else { return nil }
        self.init(device: device, seq: seq)
    }
}

extension CheckpointDocument {
    init?(reader: inout JSONReader) {
        var requires: [String: Int64]?
        let read = reader.object { reader, key in
            switch key {
            case "requires":
                var entries: [String: Int64] = [:]
                guard reader.object({ reader, device in reader.int64().map { entries[device.string] = $0 } != nil }) else { return false }
                requires = entries
                return true
            default: return reader.skip()
            }
        }
        guard read, let requires else { return nil }
        self.init(requires: requires)
    }
}
