import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Two real Syncthing instances on 127.0.0.1, each with its own home and its own copy of one
/// shared folder, started and stopped by the test. Global discovery, relays, NAT traversal,
/// usage reporting and upgrade checks are off: the only traffic is between the two on loopback.
/// Every wait is bounded.
///
/// A test that needs it starts it with `try SyncthingPair.start()`, which cancels the test with
/// the reason when syncthing is not installed or cannot start here.
final class SyncthingPair {
    static let folderID = "itsypad"
    private let directory = TemporaryDirectory()
    /// Each instance's copy of the shared folder.
    let folders: [String]
    private let instances: [Instance]

    private struct Instance {
        let home: String
        let deviceID: String
        let guiPort: UInt16
        let listenPort: UInt16
        let apiKey: String
        var process: BackgroundProcess?
    }

    /// Starts both instances and waits until they are connected; cancels the test if that cannot be done.
    static func start(timeout: Double = 60) throws -> SyncthingPair {
        try ExternalTool.require(["syncthing"])
        do {
            return try SyncthingPair(timeout: timeout)
        } catch let failure as SyncthingPair.Failure {
            try Test.cancel("syncthing cannot run here: \(failure.reason)")
        }
    }

    struct Failure: Error { let reason: String }

    private init(timeout: Double) throws {
        let root = directory.path
        folders = [root + "/copyA", root + "/copyB"]
        var prepared: [Instance] = []
        for name in ["A", "B"] {
            let home = root + "/home" + name
            let result = try Process.run(
                "syncthing", ["generate", "--home=" + home, "--no-default-folder", "--skip-port-probing"],
                environment: Self.environment(home: root))
            guard result.status == 0 else { throw Failure(reason: "syncthing generate failed: \(result.stderr)") }
            let id = try Process.run("syncthing", ["serve", "--home=" + home, "--device-id"], environment: Self.environment(home: root))
            let deviceID = id.stdout.trimmingNewline
            guard id.status == 0, !deviceID.isEmpty else { throw Failure(reason: "cannot read the device ID: \(id.stderr)") }
            prepared.append(
                Instance(
                    home: home, deviceID: deviceID, guiPort: try Self.freePort(), listenPort: try Self.freePort(),
                    apiKey: "itsypad-test-" + name))
        }
        for (index, folder) in folders.enumerated() {
            try FileSystem.makeDirectory(folder)
            let me = prepared[index], peer = prepared[1 - index]
            try FileSystem.writeAtomically(me.home + "/config.xml", Array(Self.configuration(me: me, peer: peer, folder: folder).utf8))
        }
        for index in prepared.indices {
            prepared[index].process = try BackgroundProcess(
                "syncthing", ["serve", "--home=" + prepared[index].home, "--no-browser", "--no-restart", "--no-upgrade"],
                log: prepared[index].home + "/log", environment: Self.environment(home: root))
        }
        instances = prepared
        try waitUntil(timeout: timeout, "the two instances to connect") {
            try instances.indices.allSatisfy { index in
                let connections = try request(index, "GET", "/rest/system/connections")
                return connections["connections"]?[instances[1 - index].deviceID]?["connected"]?.boolValue == true
            }
        }
    }

    deinit { stop() }

    /// Stops both instances (TERM, then KILL after a bounded wait).
    func stop() {
        for instance in instances { instance.process?.stop() }
    }

    /// Asks both instances to scan their copies now (each returns once its scan is done).
    func rescan() throws {
        for index in instances.indices { _ = try request(index, "POST", "/rest/db/scan?folder=\(Self.folderID)") }
    }

    /// Rescans, then waits until each instance has the other's whole index and needs nothing from it.
    func waitUntilInSync(timeout: Double = 60) throws {
        try rescan()
        var quietPolls = 0
        try waitUntil(timeout: timeout, "both copies to be in sync") {
            let statuses = try instances.indices.map { try request($0, "GET", "/rest/db/status?folder=\(Self.folderID)") }
            let inSync = try instances.indices.allSatisfy { index in
                let peer = try request(index, "GET", "/rest/db/completion?folder=\(Self.folderID)&device=\(instances[1 - index].deviceID)")
                return statuses[index]["state"]?.stringValue == "idle" && statuses[index]["needTotalItems"]?.int64Value == 0
                    && peer["completion"]?.doubleValue == 100 && peer["sequence"]?.int64Value == statuses[1 - index]["sequence"]?.int64Value
            }
            // Twice in a row: a change may still be on its way between two polls.
            quietPolls = inSync ? quietPolls + 1 : 0
            return quietPolls >= 2
        }
    }

    /// Stops or resumes exchanging files with the other instance (both directions).
    func pauseConnection(_ paused: Bool) throws {
        for index in instances.indices {
            _ = try request(index, "POST", "/rest/system/\(paused ? "pause" : "resume")?device=\(instances[1 - index].deviceID)")
        }
    }

    /// The instance's own log, for failure messages.
    func log(_ index: Int) -> String {
        (try? FileSystem.read(instances[index].home + "/log")).flatMap { $0.map { String(decoding: $0, as: UTF8.self) } } ?? ""
    }

    // MARK: Plumbing

    private func waitUntil(timeout: Double, _ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Time.now() + Milliseconds(timeout * 1000)
        var lastError = ""
        while Time.now() < deadline {
            do {
                if try condition() { return }
            } catch {
                lastError = " (last error: \(error))"
            }
            usleep(100_000)
        }
        throw Failure(reason: "timed out after \(Int(timeout)) s waiting for \(what)\(lastError); log of A:\n\(log(0).suffix(2000))")
    }

    private func request(_ index: Int, _ method: String, _ path: String) throws -> JSONValue {
        let instance = instances[index]
        let body = try LoopbackHTTP.request(method, port: instance.guiPort, path: path, headers: ["X-API-Key": instance.apiKey])
        return body.isEmpty ? .null : try JSONValue.parse(body)
    }

    private static func environment(home: String) -> [String: String] {
        ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "STNOUPGRADE": "1", "STNORESTART": "1"]
    }

    /// Elements left out of a hand-written config.xml take zero values, not Syncthing's defaults
    /// (maxConflicts 0 would drop conflict copies), so the ones that matter are spelled out.
    private static func configuration(me: Instance, peer: Instance, folder: String) -> String {
        """
        <configuration version="36">
            <folder id="\(folderID)" label="\(folderID)" path="\(folder)" type="sendreceive" rescanIntervalS="5" fsWatcherEnabled="true" fsWatcherDelayS="1">
                <device id="\(me.deviceID)"></device>
                <device id="\(peer.deviceID)"></device>
                <maxConflicts>10</maxConflicts>
            </folder>
            <device id="\(me.deviceID)" name="self"><address>dynamic</address></device>
            <device id="\(peer.deviceID)" name="peer"><address>tcp://127.0.0.1:\(peer.listenPort)</address></device>
            <gui enabled="true" tls="false"><address>127.0.0.1:\(me.guiPort)</address><apikey>\(me.apiKey)</apikey></gui>
            <options>
                <listenAddress>tcp://127.0.0.1:\(me.listenPort)</listenAddress>
                <globalAnnounceEnabled>false</globalAnnounceEnabled>
                <localAnnounceEnabled>false</localAnnounceEnabled>
                <relaysEnabled>false</relaysEnabled>
                <natEnabled>false</natEnabled>
                <startBrowser>false</startBrowser>
                <urAccepted>-1</urAccepted>
                <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
                <crashReportingEnabled>false</crashReportingEnabled>
                <reconnectionIntervalS>1</reconnectionIntervalS>
            </options>
        </configuration>
        """
    }

    /// A port on 127.0.0.1 that was free a moment ago (the kernel picks it).
    private static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(reason: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = LoopbackHTTP.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Failure(reason: "bind: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// A child process running in the background, stopped by `stop()` or when released.
final class BackgroundProcess {
    private var pid: pid_t?

    init(_ program: String, _ arguments: [String], log: String, environment: [String: String]) throws {
        pid = try Process.spawn(program, arguments, stdin: "/dev/null", stdout: log, stderr: log + ".err", environment: environment)
    }

    deinit { stop() }

    /// SIGTERM, up to 10 s for it to exit, then SIGKILL.
    func stop() {
        guard let pid else { return }
        self.pid = nil
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<100 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(100_000)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}

/// Just enough HTTP/1.0 for Syncthing's REST API on 127.0.0.1, with a time-out on every socket operation.
enum LoopbackHTTP {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func address(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// The response body; throws unless the status is 2xx.
    static func request(_ method: String, port: UInt16, path: String, headers: [String: String], timeout: Int = 10) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var target = address(port: port)
        let connected = withUnsafePointer(to: &target) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw Failure(description: "connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        var text = "\(method) \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 0\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        try Array((text + "\r\n").utf8).withUnsafeBytes { try FileSystem.writeAll(fd: fd, $0, path: "127.0.0.1:\(port)") }
        let response = try FileSystem.readAll(fd: fd, path: "127.0.0.1:\(port)")
        let separator = Array("\r\n\r\n".utf8)
        guard let headerEnd = response.indices.first(where: { response[$0...].starts(with: separator) }) else {
            throw Failure(description: "no HTTP response from 127.0.0.1:\(port)")
        }
        let statusLine = String(decoding: response[..<headerEnd].prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        let status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        let body = String(decoding: response[(headerEnd + separator.count)...], as: UTF8.self)
        guard (200..<300).contains(status) else { throw Failure(description: "\(method) \(path): \(statusLine) \(body)") }
        return body
    }
}
