#if canImport(Glibc)
import Glibc
#endif

/// Opening a TCP connection without waiting on a host that never answers.
package enum TCPConnection {
    /// A TCP socket of `family` connected to `address` (a `sockaddr_in` or `sockaddr_in6`), blocking
    /// and close-on-exec, or -1 with errno set (ETIMEDOUT when the host did not accept within
    /// `timeout` seconds: one that drops connection attempts would otherwise hold the caller for minutes).
    package static func open<Address>(_ family: Int32, to address: Address, within timeout: Double) -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = address
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
        var code = connected == 0 ? 0 : errno
        if code == EINPROGRESS {
            let deadline = Monotonic.seconds() + timeout
            var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            var polled: Int32
            repeat {
                let remaining = deadline - Monotonic.seconds()
                polled = remaining > 0 ? poll(&ready, 1, Int32((remaining * 1000).rounded(.up))) : 0
            } while polled < 0 && errno == EINTR
            var length = socklen_t(MemoryLayout<Int32>.size)
            code = polled > 0 ? 0 : ETIMEDOUT
            if polled > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
        }
        // What follows is waited for with its own deadline: the socket blocks again.
        if code == 0, fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 { code = errno }
        guard code == 0 else {
            close(fd)
            errno = code
            return -1
        }
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }
}
