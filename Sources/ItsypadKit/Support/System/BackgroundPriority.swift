#if canImport(Glibc)
import Glibc
#endif

/// A sync is background work: the processors go first to what the user runs meanwhile (a
/// clipboard watcher's `clip add`), which on two cores otherwise waits for a sync's two threads.
/// Nothing changes on an idle machine, where nothing else asks for them.
package enum BackgroundPriority {
    /// The nice value of background work (`nice`'s default): a waking command at 0 weighs about
    /// ten times as much, so it preempts the sync at once.
    static let niceValue: Int32 = 10

    /// Lowers the calling thread's priority to `niceValue`, with the threads and programs it
    /// starts afterwards (on Linux a nice value is a thread's, inherited): call it before any.
    /// Never raises it (a process already nicer stays so), and cannot be undone without
    /// privilege, so it is for a process whose remaining work is all in the background.
    package static func enter() {
        let process = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let current = getpriority(process, 0)
        guard errno == 0, current < niceValue else { return }
        _ = setpriority(process, 0, niceValue)
    }
}
