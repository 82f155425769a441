/// Where the lines end that this backend committed to its own journal and whose caller recorded
/// what they wrote (`SyncBackend.accepted`): a fetch from a token moves past them without reading
/// them back (see `FolderBackend.acceptedLinesToPassOver`). Only where they end is kept, a run of
/// lines one after another as one entry, none of their versions: a push of any size holds a few
/// bytes. Kept in memory only: a new process reads its journal.
struct AcceptedLines {
    /// Accepted lines one after another: the journal's last sequence number before them, their
    /// last, and where reading goes on after them.
    struct Run: Equatable {
        let after: Int64
        var through: Int64
        var resume: JournalPosition
    }

    /// The zone the lines were written in.
    let zone: String
    /// In journal order, apart (a line that follows a run joins it).
    private(set) var runs: [Run] = []

    init(zone: String) {
        self.zone = zone
    }

    /// Adds the line `receipt` names; one of another zone, or before a run held, is not added.
    mutating func add(_ receipt: CommitReceipt) {
        guard receipt.zone == zone, receipt.after >= runs.last?.through ?? 0 else { return }
        if let last = runs.last, last.through == receipt.after {
            runs[runs.count - 1].through = receipt.through
            runs[runs.count - 1].resume = receipt.resume
        } else {
            runs.append(Run(after: receipt.after, through: receipt.through, resume: receipt.resume))
        }
    }

    /// The run that starts right after `seq`.
    func run(after seq: Int64) -> Run? {
        runs.first { $0.after == seq }
    }

    /// Where the first run after `seq` starts (the last sequence number before it): a read of
    /// the journal from `seq` stops there.
    func nextRun(after seq: Int64) -> Int64? {
        runs.first { $0.after > seq }?.after
    }

    /// The runs from `seq` on (the last sequence number before the first of them).
    func since(_ seq: Int64) -> AcceptedLines {
        var lines = AcceptedLines(zone: zone)
        lines.runs = runs.filter { $0.after >= seq }
        return lines
    }

    /// Lets go of the runs a fetch has read past (its position is `seq` or later).
    mutating func forget(through seq: Int64) {
        runs.removeAll { $0.through <= seq }
    }
}
