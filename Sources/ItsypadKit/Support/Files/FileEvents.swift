#if canImport(Glibc)
import Glibc
#endif

/// Waits, without using CPU, for a change in some directories (inotify) or
/// input on a pipe or socket, a request to stop (SIGINT, SIGTERM, SIGHUP) or a time-out.
///
/// Both kinds of event arrive as signals: the inotify descriptor raises SIGIO
/// when an event is queued, and all four signals stay blocked while the
/// process works, so `wait` collects them with one `sigtimedwait`. Nothing
/// is lost between checking and waiting (a blocked signal stays pending),
/// and a stop requested in the middle of some work is seen when it is done.
/// Signal masks belong to a thread: this is for a single-threaded process
/// such as the itsypad binary (elsewhere another thread could take the signals).
package final class FileEvents {
    /// What ended a wait.
    package enum Wake: Equatable { case changed, stopRequested, timedOut }

    /// A directory to watch, and the names in it whose changes count (nil: every name).
    package struct Watched: Hashable {
        package let directory: String
        let names: Set<String>?
        /// Whether `directory` itself may be a symlink (a root the user named; below it, none is followed).
        let followsSymlink: Bool

        package init(_ directory: String, names: Set<String>? = nil, followsSymlink: Bool = false) {
            self.directory = directory
            self.names = names
            self.followsSymlink = followsSymlink
        }
    }

    private let fd: Int32
    private var signals = sigset_t()
    private var previousMask = sigset_t()
    private var watches: [Int32: Watched] = [:]
    /// Set once a wait has returned `stopRequested`.
    private var stopRequested = false
    private static let stopSignals = [SIGINT, SIGTERM, SIGHUP]

    /// Content changes, files created, removed or renamed in place, and the directory itself going away.
    private static let eventMask = UInt32(
        IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    /// Without inotify (out of instances, a kernel without it) every directory counts as
    /// unwatched, and waits end only by a signal or their time-out.
    package init() {
        sigemptyset(&signals)
        for signal in [SIGIO] + FileEvents.stopSignals { sigaddset(&signals, signal) }
        sigprocmask(SIG_BLOCK, &signals, &previousMask)
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return }
        // SIGIO to this process whenever an event is queued.
        _ = fcntl(fd, F_SETOWN, getpid())
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC)
    }

    deinit {
        // Closed first, so that no SIGIO comes after: one still pending would end the process
        // (its default action) once the mask is restored, and so would a second request to stop
        // after the first was taken. Both are taken here.
        if fd >= 0 { close(fd) }
        for descriptor in readable { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_ASYNC) }
        var discarded = sigset_t()
        sigemptyset(&discarded)
        sigaddset(&discarded, SIGIO)
        if stopRequested { for signal in FileEvents.stopSignals { sigaddset(&discarded, signal) } }
        var now = timespec(tv_sec: 0, tv_nsec: 0)
        while sigtimedwait(&discarded, nil, &now) > 0 {}
        sigprocmask(SIG_SETMASK, &previousMask, nil)
    }

    /// Watches exactly `directories` from now on (one watched again is refreshed: it may
    /// have been replaced). Returns those that cannot be watched (missing, not a
    /// directory, out of watches): their changes are seen only by polling.
    @discardableResult
    package func watch(_ directories: [Watched]) -> [Watched] {
        guard fd >= 0 else { return directories }
        let wanted = Set(directories)
        for (descriptor, watched) in watches where !wanted.contains(watched) {
            inotify_rm_watch(fd, descriptor)
            watches[descriptor] = nil
        }
        var unwatched: [Watched] = []
        for watched in directories {
            let mask = FileEvents.eventMask | (watched.followsSymlink ? 0 : UInt32(IN_DONT_FOLLOW))
            let descriptor = inotify_add_watch(fd, watched.directory, mask)
            guard descriptor >= 0 else { unwatched.append(watched); continue }
            // The same descriptor comes back for the same directory; a new one means it was replaced.
            for (old, previous) in watches where previous == watched && old != descriptor {
                inotify_rm_watch(fd, old)
                watches[old] = nil
            }
            watches[descriptor] = watched
        }
        return unwatched
    }

    /// Also wakes a wait (as `changed`) whenever `descriptor` (a pipe, a socket) has something to
    /// read or has ended, until the caller has read it: it raises SIGIO like the inotify descriptor.
    package func watchReadable(_ descriptor: Int32) {
        readable.append(descriptor)
        _ = fcntl(descriptor, F_SETOWN, getpid())
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_ASYNC | O_NONBLOCK)
    }

    private var readable: [Int32] = []

    private func anyReadable() -> Bool {
        var fds = readable.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        return !fds.isEmpty && poll(&fds, nfds_t(fds.count), 0) > 0
    }

    /// Waits up to `timeout` seconds for a relevant change or a request to stop.
    package func wait(timeout: Double) -> Wake {
        let deadline = Monotonic.seconds() + max(0, timeout)
        while true {
            if drain() || anyReadable() { return .changed }
            // Even when the time is up: a stop requested during the last sync is pending, and goes first.
            let remaining = max(0, deadline - Monotonic.seconds())
            var pause = timespec(tv_sec: Int(remaining), tv_nsec: Int((remaining - remaining.rounded(.down)) * 1e9))
            var info = siginfo_t()
            let signal = sigtimedwait(&signals, &info, &pause)
            if FileEvents.stopSignals.contains(signal) {
                stopRequested = true
                return .stopRequested
            }
            if signal < 0 && errno == EAGAIN { return .timedOut }
            // SIGIO: read what came; EINTR: wait for the rest of the time.
        }
    }

    /// Reads every queued event; true when one of them is a change that counts.
    private func drain() -> Bool {
        guard fd >= 0 else { return false }
        var changed = false
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return changed }
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= count {
                let (descriptor, mask, nameLength) = buffer.withUnsafeBytes { bytes in
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, event.mask, Int(event.len))
                }
                let nameBytes = buffer[(offset + headerSize)..<min(count, offset + headerSize + nameLength)]
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                changed = counts(descriptor: descriptor, mask: mask, name: name) || changed
                offset += headerSize + nameLength
            }
        }
    }

    private func counts(descriptor: Int32, mask: UInt32, name: String) -> Bool {
        // The kernel dropped events: anything may have changed.
        if mask & UInt32(IN_Q_OVERFLOW) != 0 { return true }
        guard let watched = watches[descriptor] else { return false }
        if mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
            // The directory went away (an unmounted disk, a removed backend): the next sync says so.
            if mask & UInt32(IN_IGNORED) != 0 { watches[descriptor] = nil }
            return true
        }
        return watched.names.map { $0.contains(name) } ?? true
    }
}

/// Seconds on a clock that never jumps (time-outs must not follow a changed wall clock).
package enum Monotonic {
    package static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
