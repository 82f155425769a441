/// This device's `device.json` as a backend last read or wrote it, and the document its commits put
/// off writing since: newer only in `appliedSeq`, which names record files already durable (see
/// `FolderBackend.commit`), with the end of the journal those commits left. A push so writes
/// `device.json` once (`finishWrites`), not once a batch; killed before, the next run rolls the
/// journal forward from the file's `appliedSeq`, as after any crash between a commit and its files.
struct OwnDeviceDocument {
    private var onDisk: DeviceDocument?
    private var unwritten: (document: DeviceDocument, end: DeviceJournal.End)?

    /// Whether a document waits to be written.
    var isPutOff: Bool { unwritten != nil }

    /// The document to go on from, given the file as read now (`read`) and the journal's end: the
    /// one put off while the file and the journal are as this backend left them, else the file's
    /// (another process wrote either: what was put off is forgotten, and the journal rolled forward).
    mutating func current(read: DeviceDocument, end: DeviceJournal.End?) -> DeviceDocument {
        if let put = unwritten, read != onDisk || put.end != end { unwritten = nil }
        onDisk = read
        return unwritten?.document ?? read
    }

    /// `document` is to be written, once, later; the journal ends at `end`.
    mutating func putOff(_ document: DeviceDocument, end: DeviceJournal.End) {
        unwritten = (document, end)
    }

    /// `document` was written: the file holds it.
    mutating func wrote(_ document: DeviceDocument) {
        onDisk = document
        unwritten = nil
    }
}
