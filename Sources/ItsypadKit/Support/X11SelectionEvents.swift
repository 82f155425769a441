#if canImport(Glibc)
import Glibc
#endif

/// A connection to a local X server that reports every change of a selection's
/// owner (XFixes SelectSelectionInput, as clipnotify does): the socket becomes
/// readable when the selection changes, and ends when the server goes away.
/// It speaks just enough of the X11 protocol for that: setup (with an
/// MIT-MAGIC-COOKIE-1 from the Xauthority file when it has one), InternAtom,
/// QueryExtension and two XFixes requests. It never reads the selection itself.
package final class X11SelectionEvents {
    /// The connection; after setup, only the selection's events arrive on it.
    package let descriptor: Int32

    /// Connects to `display` (":0", ":1.0", "unix:2") and asks for the events of `selection`
    /// ("CLIPBOARD", "PRIMARY"). Fails for a display that is not on this machine.
    package init(display: String, selection: String, xauthority: String?) throws {
        guard let number = X11SelectionEvents.displayNumber(display) else {
            throw ItsypadError.failure("DISPLAY \(display) is not a local X display (:N); clip watch needs one")
        }
        descriptor = try X11SelectionEvents.connect(number)
        do {
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let cookie = xauthority.flatMap { X11SelectionEvents.cookie(in: $0, display: number) }
            let root = try setUp(cookie: cookie)
            let atom = try reply(to: X11SelectionEvents.request(16, [], name: selection)).word(at: 8)
            let fixes = try reply(to: X11SelectionEvents.request(98, [], name: "XFIXES"))
            guard fixes[8] != 0 else { throw ItsypadError.failure("the X server at \(display) has no XFIXES extension") }
            _ = try reply(to: X11SelectionEvents.request(fixes[9], minor: 0, [5, 0]))
            // SetSelectionOwner, SelectionWindowDestroy and SelectionClientClose.
            try send(X11SelectionEvents.request(fixes[9], minor: 2, [root, atom, 7]))
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// Reads the events that came; false once the server has closed the connection.
    package func consume() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { continue }
            if count < 0 && errno == EINTR { continue }
            return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
        }
    }

    /// The display number of a local display: ":N", ":N.S" or "unix:N".
    static func displayNumber(_ display: String) -> String? {
        guard let colon = display.lastIndex(of: ":") else { return nil }
        let host = display[..<colon]
        guard host.isEmpty || host == "unix" else { return nil }
        let number = display[display.index(after: colon)...].prefix { $0 != "." }
        return !number.isEmpty && number.allSatisfy(\.isASCII) && UInt16(number) != nil ? String(number) : nil
    }

    /// The server's socket: /tmp/.X11-unix/XN, else the abstract socket of that name.
    private static func connect(_ number: String) throws -> Int32 {
        let path = "/tmp/.X11-unix/X" + number
        for abstract in [false, true] {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { break }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = (abstract ? [0] : []) + Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
            }
            if connected == 0 { return fd }
            close(fd)
        }
        throw ItsypadError.temporary("cannot connect to the X server at :\(number) (\(path)): \(String(cString: strerror(errno)))")
    }

    /// Sends the setup request; returns the first screen's root window.
    private func setUp(cookie: [UInt8]?) throws -> UInt32 {
        let name = cookie == nil ? [] : Array("MIT-MAGIC-COOKIE-1".utf8)
        let data = cookie ?? []
        var setup: [UInt8] = [0x6C, 0, 11, 0, 0, 0]
        setup += X11SelectionEvents.half(name.count) + X11SelectionEvents.half(data.count) + [0, 0]
        setup += X11SelectionEvents.padded(name) + X11SelectionEvents.padded(data)
        try send(setup)
        let header = try receive(8)
        let body = try receive(Int(header.half(at: 6)) * 4)
        guard header[0] == 1 else {
            let reason = String(decoding: body.prefix(Int(header[1])), as: UTF8.self)
            throw ItsypadError.failure("the X server refused the connection: \(reason.isEmpty ? "no reason given" : reason)")
        }
        // Fixed part (32 bytes), vendor, pixmap formats (8 bytes each), then the first screen, its root first.
        let vendor = (Int(body.half(at: 16)) + 3) & ~3
        let screen = 32 + vendor + Int(body[21]) * 8
        guard body[20] > 0, body.count >= screen + 4 else { throw ItsypadError.failure("the X server sent a malformed setup") }
        return body.word(at: screen)
    }

    /// Sends a request and reads its reply (32 bytes and any more it announces); an X error fails.
    private func reply(to request: [UInt8]) throws -> [UInt8] {
        try send(request)
        while true {
            var packet = try receive(32)
            switch packet[0] {
            case 0: throw ItsypadError.failure("the X server reported error \(packet[1]) for a request of clip watch")
            case 1:
                packet += try receive(Int(packet.word(at: 4)) * 4)
                return packet
            default: continue  // An event before the reply.
            }
        }
    }

    private func send(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try FileSystem.writeAll(fd: descriptor, $0, path: "the X server's socket") }
    }

    private func receive(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + filled, count - filled, 0) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw ItsypadError.temporary("the X server closed the connection or did not answer") }
            filled += got
        }
        return bytes
    }

    /// A request: opcode, its data byte (or an extension's minor opcode), its length, the words.
    private static func request(_ opcode: UInt8, minor: UInt8 = 0, _ words: [UInt32], name: String? = nil) -> [UInt8] {
        let nameBytes = name.map { half($0.utf8.count) + [0, 0] + padded(Array($0.utf8)) } ?? []
        let body = words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } } + nameBytes
        return [opcode, minor] + half(1 + body.count / 4) + body
    }

    private static func half(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    private static func padded(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4) }

    /// The MIT-MAGIC-COOKIE-1 for this machine's display `number` in an Xauthority file:
    /// entries of family, address, number, name and data, each but the first a length-prefixed string.
    static func cookie(in path: String, display number: String) -> [UInt8]? {
        guard let file = try? FileSystem.read(path) else { return nil }
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        let hostname = Array(String(cString: host).utf8)
        var offset = 0
        func string() -> [UInt8]? {
            guard offset + 2 <= file.count else { return nil }
            let length = Int(file[offset]) << 8 | Int(file[offset + 1])
            guard offset + 2 + length <= file.count else { return nil }
            defer { offset += 2 + length }
            return Array(file[(offset + 2)..<(offset + 2 + length)])
        }
        while offset + 2 <= file.count {
            let family = Int(file[offset]) << 8 | Int(file[offset + 1])
            offset += 2
            guard let address = string(), let entryNumber = string(), let name = string(), let data = string() else { return nil }
            // FamilyLocal (256) for this host, or FamilyWild (65535).
            let here = family == 65535 || (family == 256 && address == hostname)
            if here && (entryNumber.isEmpty || entryNumber == Array(number.utf8)) && name == Array("MIT-MAGIC-COOKIE-1".utf8) {
                return data
            }
        }
        return nil
    }
}

extension [UInt8] {
    fileprivate func half(at offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }
    fileprivate func word(at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(self[offset + $1]) << (8 * $1) }
    }
}
