#if canImport(Glibc)
import Glibc
#endif

/// Runs a multi-step change with Ctrl-C (and SIGTERM, SIGHUP) held back, so an
/// interrupt lands after the change is committed: never halfway through. A
/// signal that arrived meanwhile is delivered on return and ends the process
/// as usual (exit 130 for Ctrl-C).
public func withInterruptsDeferred<T>(_ body: () throws -> T) rethrows -> T {
    var blocked = sigset_t()
    var previous = sigset_t()
    sigemptyset(&blocked)
    for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&blocked, signal) }
    sigprocmask(SIG_BLOCK, &blocked, &previous)
    defer { sigprocmask(SIG_SETMASK, &previous, nil) }
    return try body()
}
