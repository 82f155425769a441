import ItsypadSupport

/// A remote's `status.json`, beside its mirror: when it last fetched and sent, its last failure,
/// and for git whether the engine must send everything again. Apart from that mark it is only
/// shown (`sync status`): a missing or unreadable file knows nothing, and one that cannot be
/// written is left as it was.
package struct RemoteStatusFile: Codable, Equatable {
    package var lastFetch: Int64?
    package var lastSend: Int64?
    package var lastError: String?
    /// Git: the clone was reset to a rewritten remote; the engine has not yet started over.
    var mustSendEverything: Bool?

    static func read(_ path: String) -> RemoteStatusFile {
        guard let bytes = try? FileTree.containing(path).read(path, limit: 64 * 1024),
            let status = try? JSONCoding.decode(RemoteStatusFile.self, from: bytes)
        else { return RemoteStatusFile() }
        return status
    }

    func write(_ path: String) throws {
        try FileTree.containing(path).writeAtomically(path, try JSONCoding.encode(self))
    }

    /// Reads the file at `path`, applies `change` and writes it back if it can.
    static func update(_ path: String, _ change: (inout RemoteStatusFile) -> Void) {
        var status = read(path)
        change(&status)
        try? status.write(path)
    }

    /// Keeps `failure` as the last error at `path` and returns it, for `throw record(…)`.
    static func record(failure: ItsypadError, at path: String) -> ItsypadError {
        update(path) { $0.lastError = failure.message }
        return failure
    }

    /// What `sync status` shows.
    var status: RemoteStatus { RemoteStatus(lastFetch: lastFetch, lastSend: lastSend, lastError: lastError) }
}
