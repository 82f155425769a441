import ItsypadSupport

extension DirectoryBackend {
    /// The directories whose changes mean another device wrote: the journal (each
    /// committed batch appends to it) and the backend root (zone.json created or
    /// replaced). Records, state and the lock change with every sync, ours included.
    package var peerChangeSignals: [FileEvents.Watched] {
        [
            FileEvents.Watched(path, names: ["zone.json", "journal"], followsSymlink: true),
            FileEvents.Watched(layout.journalDirectory),
        ]
    }
}
