import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite struct SubprocessTests {
    func shell(_ script: String, environment: [String: String] = [:]) -> Subprocess {
        Subprocess(executable: "/bin/sh", arguments: ["-c", script], environment: environment)
    }

    @Test func capturesBothStreamsAndTheStatusWithoutAShell() throws {
        let output = try Subprocess(executable: "/bin/echo", arguments: ["a b", "$HOME;", "*"], environment: [:]).run(timeout: 30)
        #expect(output.status == 0 && !output.timedOut)
        #expect(output.outputText == "a b $HOME; *\n", "arguments reach the program as they are")
        let failed = try shell(
            "echo out; echo >&2; echo 'bad\\033[31m' >&2; echo >&2; echo '  second\\r' >&2; echo >&2; exit 3", environment: ["X": "y"]
        ).run(timeout: 30)
        #expect(failed.status == 3)
        #expect(failed.outputText == "out\n")
        #expect(failed.errorText == "bad\\u{1b}[31m\n\n  second", "lines as the program wrote them, blank ones at the ends dropped")
    }

    @Test func passesOnlyTheGivenEnvironment() throws {
        let output = try shell("echo \"$ONLY:${HOME:-unset}\"", environment: ["ONLY": "this"]).run(timeout: 30)
        #expect(output.outputText == "this:unset\n")
    }

    @Test func keepsAtMostTheLimitAndStillDrainsTheRest() throws {
        let output = try shell("head -c 300000 /dev/zero; echo done >&2").run(timeout: 30, outputLimit: 1000)
        #expect(output.status == 0 && output.standardOutput.count == 1000)
        #expect(output.errorText == "done")
    }

    @Test func killsTheWholeProcessGroupAtTheTimeOut() throws {
        // The grandchild holds the pipes open: only killing the group ends the wait.
        let output = try shell("sleep 60 & sleep 60").run(timeout: 0.5)
        #expect(output.timedOut)
        #expect(output.status == 128 + SIGKILL)
    }

    /// With `restartedByOutput` a program that keeps reporting progress runs past the time-out, and
    /// one that falls silent is killed a time-out after its last output.
    @Test func aTimeOutRestartedByOutputFollowsProgress() throws {
        let progressing = try shell("for i in $(seq 12); do echo $i >&2; sleep 0.25; done").run(timeout: 1.5, restartedByOutput: true)
        #expect(progressing.status == 0 && !progressing.timedOut, "3 s of progress, never 1.5 s without")
        let started = Monotonic.seconds()
        let stalled = try shell("echo started >&2; sleep 60").run(timeout: 1, restartedByOutput: true)
        #expect(stalled.timedOut && stalled.errorText == "started")
        #expect(Monotonic.seconds() - started < 30)
    }

    /// 16 MiB of blank lines: only the tail is kept, and the message is its last lines (in linear time:
    /// a message made from a megabyte of blank lines one removal at a time took hours).
    @Test func standardErrorKeepsItsEndAndTheMessageItsLastLines() throws {
        let output = try shell(
            "head -c 16777216 /dev/zero | tr '\\0' '\\n' >&2; for i in $(seq 50); do echo \"line $i\" >&2; done; echo >&2"
        ).run(timeout: 60)
        try #require(output.standardError.count <= Subprocess.errorTail)
        #expect(output.errorText == (["…"] + (11...50).map { "line \($0)" }).joined(separator: "\n"))
    }

    /// A program that closes its output and keeps running is killed `exitGrace` seconds later, well before its time-out.
    @Test func aProgramThatOutlivesItsOutputIsKilled() throws {
        let started = Monotonic.seconds()
        let output = try shell("exec >/dev/null 2>&1; exec sleep 100").run(timeout: 120)
        #expect(output.outlivedOutput && !output.timedOut)
        #expect(output.status == 128 + SIGKILL)
        #expect(Monotonic.seconds() - started < Subprocess.exitGrace + 20)
    }

    @Test func findsProgramsOnTheGivenSearchPathOnly() {
        #expect(Subprocess.find("sh", searchPath: "/nonexistent:/bin") == "/bin/sh")
        #expect(Subprocess.find("sh", searchPath: "/nonexistent") == nil)
        #expect(Subprocess.find("/bin/sh", searchPath: "") == "/bin/sh")
        #expect(Subprocess.find("bin", searchPath: "/") == nil, "a directory is no program")
    }

    @Test func aProgramThatCannotStartIsAFailure() {
        #expect(throws: ItsypadError.self) {
            try Subprocess(executable: "/nonexistent/git", arguments: [], environment: [:]).run(timeout: 5)
        }
    }
}
