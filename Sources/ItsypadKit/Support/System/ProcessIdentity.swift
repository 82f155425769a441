#if canImport(Glibc)
import Glibc
#endif

/// A process as its pid and its start time (clock ticks after boot, from `/proc/PID/stat`): a pid
/// alone may name another process once the first has exited.
package struct ProcessIdentity: Equatable, Sendable, CustomStringConvertible {
    package let pid: pid_t
    package let started: UInt64

    package var description: String { "\(pid):\(started)" }

    /// Whether this very process still runs (not a later one given the same pid); a zombie counts
    /// as gone.
    package var isRunning: Bool { pid > 0 && ProcessIdentity.startTime(of: pid) == started }

    /// Field 22 of `/proc/PID/stat`, counted after the command name's closing parenthesis (the
    /// name may hold spaces and parentheses); nil for no such process or a zombie.
    static func startTime(of pid: pid_t) -> UInt64? {
        guard pid > 0 else { return nil }
        // A /proc file says its size is 0: read to its end.
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        guard let bytes = try? FileSystem.readAll(fd: fd, limit: 4096), let close = bytes.lastIndex(of: UInt8(ascii: ")")) else {
            return nil
        }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        // After the name: state (field 3) … starttime (field 22).
        guard fields.count > 19, fields[0] != [UInt8(ascii: "Z")] else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
    }
}

extension ProcessIdentity {
    /// The running process `pid`; nil when there is none.
    package init?(pid: pid_t) {
        guard let started = ProcessIdentity.startTime(of: pid) else { return nil }
        self.init(pid: pid, started: started)
    }

    /// A process as `description` writes it (`PID:START`).
    package init?(_ text: Substring) {
        let fields = text.split(separator: ":")
        guard fields.count == 2, let pid = pid_t(fields[0]), let started = UInt64(fields[1]) else { return nil }
        self.init(pid: pid, started: started)
    }
}
