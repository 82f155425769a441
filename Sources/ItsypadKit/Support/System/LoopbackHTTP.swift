#if canImport(Glibc)
import Glibc
#endif

/// A client of an HTTP server that a program of ours serves on 127.0.0.1 (rclone's remote
/// control): one POST per connection, in HTTP/1.0, so that the server closes the connection after
/// its response and never chunks it (the response is everything up to the end of the stream).
package struct LoopbackHTTP {
    package let port: UInt16
    /// Each request's Authorization header.
    package let authorization: String

    package init(port: UInt16, user: String, password: String) {
        self.port = port
        authorization = "Basic " + Base64.encode(Array("\(user):\(password)".utf8))
    }

    package struct Response {
        package let status: Int
        package let body: [UInt8]
    }

    /// POSTs `body` (JSON) to `path`, the whole exchange bounded by `timeout` seconds; a response
    /// body larger than `limit` bytes is refused. Exit 75 when the server cannot be reached or
    /// does not answer in time.
    package func post(_ path: String, json body: [UInt8], timeout: Double, limit: Int) throws -> Response {
        let deadline = Monotonic.seconds() + timeout
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let fd = TCPConnection.open(AF_INET, to: address, within: timeout)
        guard fd >= 0 else { throw unreachable(String(cString: strerror(errno))) }
        defer { close(fd) }
        let head =
            "POST \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: \(authorization)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            try wait(for: POLLOUT, on: fd, until: deadline)
            let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw unreachable(String(cString: strerror(errno))) }
            sent += count
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            try wait(for: POLLIN, on: fd, until: deadline)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw unreachable(String(cString: strerror(errno))) }
            if count == 0 { break }
            response += buffer[0..<count]
            guard response.count <= limit + 4096 else {
                throw ItsypadError.failure("the response of 127.0.0.1:\(port)\(path) is larger than \(limit >> 20) MiB")
            }
        }
        return try LoopbackHTTP.parse(response, from: "127.0.0.1:\(port)\(path)")
    }

    /// The status and body of an HTTP/1.x response read to its end.
    static func parse(_ response: [UInt8], from place: String) throws -> Response {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = response.indices.first(where: { response[$0...].starts(with: separator) }) else {
            throw ItsypadError.temporary("\(place) answered with no HTTP response")
        }
        let statusLine = String(decoding: response[..<(response.firstIndex(of: 0x0D) ?? end)], as: UTF8.self)
        let fields = statusLine.split(separator: " ")
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/1."), let status = Int(fields[1]) else {
            throw ItsypadError.temporary("\(place) answered with no HTTP status")
        }
        return Response(status: status, body: Array(response[(end + separator.count)...]))
    }

    private func wait(for event: Int32, on fd: Int32, until deadline: Double) throws {
        var ready = pollfd(fd: fd, events: Int16(event), revents: 0)
        while true {
            let remaining = deadline - Monotonic.seconds()
            guard remaining > 0 else { throw unreachable("no answer in time") }
            let polled = poll(&ready, 1, Int32((remaining * 1000).rounded(.up)))
            if polled > 0 { return }
            if polled < 0 && errno != EINTR { throw unreachable(String(cString: strerror(errno))) }
        }
    }

    private func unreachable(_ reason: String) -> ItsypadError {
        .temporary("cannot reach 127.0.0.1:\(port): \(reason)")
    }
}
