import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A connection to an X server that reports every change of a selection's
/// owner (XFixes SelectSelectionInput, as clipnotify does): the socket becomes
/// readable when the selection changes, and ends when the server goes away.
/// It speaks just enough of the X11 protocol for that: setup (with an
/// MIT-MAGIC-COOKIE-1 from the Xauthority file when it has one), InternAtom,
/// QueryExtension and two XFixes requests. It never reads the selection itself.
/// A local display (`:N`) is reached through its socket, any other (`HOST:N`, as
/// ssh -X sets `localhost:10`) over TCP to port 6000 + N.
package final class X11SelectionEvents {
    /// The connection; after setup, only the selection's events arrive on it.
    package let descriptor: Int32

    /// Connects to `display` (":0", ":1.0", "unix:2", "localhost:10.0", "192.0.2.7:1", "[::1]:0")
    /// and asks for the events of `selection` ("CLIPBOARD", "PRIMARY").
    package init(display: String, selection: String, xauthority: String?) throws {
        guard let (host, number) = X11SelectionEvents.parse(display) else {
            throw ItsypadError.failure("DISPLAY \(display) is not an X display (HOST:N or :N); clip watch needs one")
        }
        self.display = display
        let peer: X11SelectionEvents.AuthorizationAddress
        if let host {
            (descriptor, peer) = try X11SelectionEvents.connect(host: host, number: number)
        } else {
            descriptor = try X11SelectionEvents.connect(number)
            peer = .local
        }
        do {
            let cookie = xauthority.flatMap { X11SelectionEvents.cookie(in: $0, display: number, for: peer) }
            let root = try setUp(cookie: cookie)
            let atom = try reply(to: X11SelectionEvents.request(16, [], name: selection)).word(at: 8)
            let fixes = try reply(to: X11SelectionEvents.request(98, [], name: "XFIXES"))
            guard try fixes.byte(at: 8) != 0 else {
                throw ItsypadError.failure("the X server at DISPLAY \(display) has no XFIXES extension")
            }
            let opcode = try fixes.byte(at: 9)
            _ = try reply(to: X11SelectionEvents.request(opcode, minor: 0, [5, 0]))
            // SetSelectionOwner, SelectionWindowDestroy and SelectionClientClose.
            try send(X11SelectionEvents.request(opcode, minor: 2, [root, atom, 7]))
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// The DISPLAY it was reached at, as errors name it.
    private let display: String
    /// How long the server may take to answer the setup or a request.
    private static let answerTimeout = 5.0
    /// The most a reply may hold: those clip watch asks for are 32 bytes, a setup reply a few KiB
    /// (at most 256 KiB by its length field). A length beyond it is a malformed reply, never allocated.
    private static let replyLimit = 1 << 20

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

    /// The host (nil for this machine's socket: "", "unix") and the display number of "HOST:N[.S]".
    /// An IPv6 address may stand in brackets; DECnet's "HOST::N" is not X over TCP.
    static func parse(_ display: String) -> (host: String?, number: String)? {
        guard let colon = display.lastIndex(of: ":") else { return nil }
        var host = String(display[..<colon])
        let number = display[display.index(after: colon)...].prefix { $0 != "." }
        guard !number.isEmpty, number.allSatisfy(\.isASCII), let value = UInt16(number), value < 65535 - 6000 else { return nil }
        if host.isEmpty || host == "unix" { return (nil, String(number)) }
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        } else if host.hasSuffix(":") {
            return nil
        }
        return host.isEmpty ? nil : (host, String(number))
    }

    /// What an Xauthority entry names the server by: this machine (FamilyLocal, its hostname), or an
    /// address it was reached at over TCP (FamilyInternet, FamilyInternet6), as Xlib looks it up.
    enum AuthorizationAddress: Equatable {
        case local
        case internet([UInt8])
        case internet6([UInt8])
    }

    /// A TCP connection to display `number` of `host` (an IPv4 or IPv6 address, or "localhost"),
    /// and the address an Xauthority entry names it by. Names are not looked up: that would load
    /// the resolver's libraries, which this binary never does.
    private static func connect(host: String, number: String) throws -> (Int32, AuthorizationAddress) {
        let port = in_port_t(6000 + Int(number)!).bigEndian
        var v4 = in_addr()
        var v6 = in6_addr()
        let fd: Int32
        let peer: AuthorizationAddress
        if host == "localhost" || inet_pton(AF_INET, host, &v4) == 1 {
            if host == "localhost" { v4.s_addr = in_addr_t(0x7F00_0001).bigEndian }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port
            address.sin_addr = v4
            fd = TCPConnection.open(AF_INET, to: address, within: answerTimeout)
            let bytes = withUnsafeBytes(of: v4.s_addr) { Array($0) }
            // Xlib names the loopback address as this machine, the way ssh -X's xauth entry does.
            peer = bytes == [127, 0, 0, 1] ? .local : .internet(bytes)
        } else if inet_pton(AF_INET6, host, &v6) == 1 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port
            address.sin6_addr = v6
            fd = TCPConnection.open(AF_INET6, to: address, within: answerTimeout)
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            // An IPv4 address mapped into IPv6 is named as IPv4.
            peer = bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] ? .internet(Array(bytes.suffix(4))) : .internet6(bytes)
        } else {
            throw ItsypadError.failure(
                "DISPLAY \(host):\(number) names its host by name; clip watch reaches an X server over TCP by its address "
                    + "(for example 192.0.2.7:\(number)) or as localhost")
        }
        guard fd >= 0 else {
            let reason = errno == ETIMEDOUT ? "it did not accept within \(Int(answerTimeout)) s" : String(cString: strerror(errno))
            throw ItsypadError.temporary("cannot connect to the X server at \(host):\(number) (TCP port \(6000 + Int(number)!)): \(reason)")
        }
        return (fd, peer)
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
        let deadline = Monotonic.seconds() + X11SelectionEvents.answerTimeout
        let header = try receive(8, before: deadline, of: "setup reply")
        let body = try receive(Int(header.half(at: 6)) * 4, before: deadline, of: "setup reply")
        guard try header.byte(at: 0) == 1 else {
            let reason = String(decoding: body.bytes.prefix(Int(try header.byte(at: 1))), as: UTF8.self)
            let said = reason.isEmpty ? "no reason given" : Text.escapingControls(reason, limit: 200)
            throw ItsypadError.failure("the X server refused the connection of DISPLAY \(display): \(said)")
        }
        // Fixed part (32 bytes), vendor, pixmap formats (8 bytes each), then the first screen, its root first.
        guard try body.byte(at: 20) > 0 else { throw body.malformed }
        let vendor = (Int(try body.half(at: 16)) + 3) & ~3
        return try body.word(at: 32 + vendor + Int(try body.byte(at: 21)) * 8)
    }

    /// Sends a request and reads its reply (32 bytes and any more it announces); an X error fails.
    private func reply(to request: [UInt8]) throws -> Reply {
        try send(request)
        let deadline = Monotonic.seconds() + X11SelectionEvents.answerTimeout
        while true {
            let packet = try receive(32, before: deadline, of: "reply")
            switch try packet.byte(at: 0) {
            case 0:
                throw ItsypadError.failure(
                    "the X server at DISPLAY \(display) reported error \(try packet.byte(at: 1)) for a request of clip watch")
            case 1:
                let more = Int(try packet.word(at: 4))
                guard more <= X11SelectionEvents.replyLimit / 4 else { throw packet.malformed }
                return Reply(
                    bytes: packet.bytes + (try receive(more * 4, before: deadline, of: "reply")).bytes, malformed: packet.malformed)
            default: continue  // An event before the reply.
            }
        }
    }

    private func send(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try FileSystem.writeAll(fd: descriptor, $0, path: "the X server's socket") }
    }

    /// Reads `count` bytes of a reply (`what`, as a malformed one is named) as they arrive, never
    /// allocated ahead of them, waiting until `deadline` at most.
    private func receive(_ count: Int, before deadline: Double, of what: String) throws -> Reply {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(count, 1 << 16))
        while bytes.count < count {
            let remaining = deadline - Monotonic.seconds()
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let polled = remaining > 0 ? poll(&ready, 1, Int32((remaining * 1000).rounded(.up))) : 0
            if polled < 0 && errno == EINTR { continue }
            guard polled > 0 else {
                throw ItsypadError.temporary(
                    "the X server at DISPLAY \(display) did not answer within \(Int(X11SelectionEvents.answerTimeout)) s")
            }
            let got = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, min($0.count, count - bytes.count), 0) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw ItsypadError.temporary("the X server at DISPLAY \(display) closed the connection") }
            bytes += chunk[0..<got]
        }
        return Reply(bytes: bytes, malformed: .failure("the X server at DISPLAY \(display) sent a malformed \(what)"))
    }

    /// Bytes the server sent, every field read checked against their end: a short reply fails with
    /// `malformed`, never reads past it.
    private struct Reply {
        let bytes: [UInt8]
        let malformed: ItsypadError

        func byte(at offset: Int) throws -> UInt8 {
            guard offset >= 0, offset < bytes.count else { throw malformed }
            return bytes[offset]
        }

        func half(at offset: Int) throws -> UInt16 { UInt16(try byte(at: offset)) | UInt16(try byte(at: offset + 1)) << 8 }

        func word(at offset: Int) throws -> UInt32 { UInt32(try half(at: offset)) | UInt32(try half(at: offset + 2)) << 16 }
    }

    /// A request: opcode, its data byte (or an extension's minor opcode), its length, the words.
    private static func request(_ opcode: UInt8, minor: UInt8 = 0, _ words: [UInt32], name: String? = nil) -> [UInt8] {
        let nameBytes = name.map { half($0.utf8.count) + [0, 0] + padded(Array($0.utf8)) } ?? []
        let body = words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } } + nameBytes
        return [opcode, minor] + half(1 + body.count / 4) + body
    }

    private static func half(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    private static func padded(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4) }

    /// The MIT-MAGIC-COOKIE-1 for display `number` of the server at `peer` in an Xauthority file:
    /// entries of family, address, number, name and data, each but the first a length-prefixed string.
    static func cookie(in path: String, display number: String, for peer: AuthorizationAddress = .local) -> [UInt8]? {
        guard let file = try? FileSystem.read(path) else { return nil }
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        let wanted: (family: Int, address: [UInt8])
        switch peer {
        case .local: wanted = (256, Array(String(cString: host).utf8))
        case .internet(let address): wanted = (0, address)
        case .internet6(let address): wanted = (6, address)
        }
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
            // FamilyLocal (256) with this host's name or FamilyInternet (0, 6) with the address, or FamilyWild (65535).
            let here = family == 65535 || (family == wanted.family && address == wanted.address)
            if here && (entryNumber.isEmpty || entryNumber == Array(number.utf8)) && name == Array("MIT-MAGIC-COOKIE-1".utf8) {
                return data
            }
        }
        return nil
    }
}
