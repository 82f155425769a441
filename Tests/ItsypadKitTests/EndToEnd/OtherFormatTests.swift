import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A backend directory of another format (an older itsypad's, a newer one's, an encrypted one in
/// another format's layout) is refused by the binary: exit 1, a message naming the directory and
/// what it holds, and nothing written to it or to the data directory.
@Suite struct OtherFormatTests {
    static let keyCheck = "00112233445566778899aabbccddeeff"
    static let encrypted = #","encryption":"xchacha20poly1305-v1","keyCheckValue":"\#(keyCheck)""#

    /// zone.json, what the message says the directory holds, and the other files such a backend has.
    static let backends: [(zone: String, holds: String, files: [String: String])] = [
        (
            #"{"created":1,"format":1,"zoneID":"Z"}"#, "in format 1, from an earlier version",
            [
                "state.json": #"{"appliedSeq":1,"compactedThrough":0}"#, "lock": "",
                "journal/0000000000000001.log": #"{"seq":1,"device":"d","time":1,"changes":[]}"# + "\n",
                "records/ScratchTab/5c0066cb-6694-4f25-8e5a-b27c67a9433f.json": "{}",
            ]
        ),
        (
            #"{"created":1,"format":2,"zoneID":"Z"}"#, "in format 2, from an earlier version",
            ["devices/devA/device.json": "{}", "records/ScratchTab/a.devA.json": "{}"]
        ),
        (#"{"created":1,"format":7,"zoneID":"Z"}"#, "in format 7, newer than this version understands", [:]),
        (
            #"{"created":1,"format":3,"layout":1,"zoneID":"Z""# + encrypted + "}",
            "encrypted in format 1's layout, from an earlier version", [:]
        ),
        (
            #"{"created":1,"format":3,"layout":2,"zoneID":"Z""# + encrypted + "}",
            "encrypted in format 2's layout, from an earlier version", [:]
        ),
    ]

    /// Every entry below `root` (relative), with its mode and its content or link target.
    static func snapshot(_ root: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for name in try FileSystem.list(root, includingHidden: true) {
            let path = root + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let mode = String(info.st_mode, radix: 8)
            if info.st_mode & S_IFMT == S_IFDIR {
                result[name] = mode
                for (inner, value) in try snapshot(path) { result[name + "/" + inner] = value }
            } else {
                result[name] = mode + " " + String(decoding: try FileSystem.read(path) ?? [], as: UTF8.self)
            }
        }
        return result
    }

    static func makeBackend(at path: String, _ backend: (zone: String, holds: String, files: [String: String])) throws {
        for (name, content) in [("zone.json", backend.zone)] + backend.files.sorted(by: { $0.key < $1.key }) {
            try FileSystem.makeDirectory(FileSystem.directoryName(path + "/" + name))
            try FileSystem.writeAtomically(path + "/" + name, Array(content.utf8))
        }
    }

    @Test(arguments: backends.indices, ["", "--encrypt"])
    func syncEnableRefusesItAndWritesNothing(_ index: Int, _ option: String) throws {
        let device = Device()
        try #require(try device.run("tab", "new", "kept").status == 0)
        let backend = device.directory.path + "/backend"
        try Self.makeBackend(at: backend, Self.backends[index])
        let (backendBefore, dataBefore) = (try Self.snapshot(backend), try Self.snapshot(device.dataDir))

        let enable = try device.runArguments(["sync", "enable", backend] + (option.isEmpty ? [] : [option]))
        #expect(enable.status == 1, "\(enable.stderr)")
        #expect(enable.signal == nil)
        #expect(enable.stderr.contains(backend + " holds an itsypad backend " + Self.backends[index].holds), "\(enable.stderr)")
        #expect(enable.stderr.contains("nothing was written to it"), "\(enable.stderr)")
        #expect(try Self.snapshot(backend) == backendBefore, "the backend changed")
        #expect(try Self.snapshot(device.dataDir) == dataBefore, "the data directory changed")
    }

    /// A device syncing with a backend that is replaced by one of another format stops there:
    /// exit 1, the backend untouched, its pending work kept.
    @Test(arguments: backends.indices)
    func syncRefusesItAndKeepsPendingWork(_ index: Int) throws {
        let device = Device()
        let backend = device.directory.path + "/backend"
        try #require(try device.run("sync", "enable", backend).status == 0)
        try #require(try device.run("tab", "new", "typed after enabling").status == 0)
        _ = try Process.run("/bin/rm", ["-rf", backend])
        try Self.makeBackend(at: backend, Self.backends[index])
        let backendBefore = try Self.snapshot(backend)

        let sync = try device.run("sync")
        #expect(sync.status == 1, "\(sync.stderr)")
        #expect(sync.stderr.contains(backend + " holds an itsypad backend " + Self.backends[index].holds), "\(sync.stderr)")
        #expect(try Self.snapshot(backend) == backendBefore, "the backend changed")
        #expect(try device.run("sync", "status").stdout.contains("pending:    1 tab,"))
    }
}
