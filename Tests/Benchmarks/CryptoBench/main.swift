#if canImport(Glibc)
import Glibc
#endif
import ItsypadKit

// crypto-bench: throughput of the project's AEAD and record cipher, for
// Tests/Benchmarks/crypto-bench.sh. Not part of the itsypad command.
// Usage: crypto-bench [SECONDS-PER-MEASUREMENT]
// Prints one line per measurement: NAME <TAB> BYTES-PER-CALL <TAB> MiB/s <TAB> calls/s

func seconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Runs `body` until `duration` has passed (after one warm-up call); returns calls per second.
func rate(for duration: Double, _ body: () throws -> Void) rethrows -> Double {
    try body()
    var calls = 0
    let start = seconds()
    var elapsed = 0.0
    repeat {
        for _ in 0..<8 { try body() }
        calls += 8
        elapsed = seconds() - start
    } while elapsed < duration
    return Double(calls) / elapsed
}

func report(_ name: String, bytes: Int, callsPerSecond: Double) {
    let mebibytes = callsPerSecond * Double(bytes) / 1_048_576
    print("\(name)\t\(bytes)\t\(Int(mebibytes.rounded()))\t\(Int(callsPerSecond.rounded()))")
}

let duration = CommandLine.arguments.count > 1 ? Double(CommandLine.arguments[1]) ?? 1 : 1
let key = try SecretBytes.random(count: 32)
let associatedData = Array("zone/ScratchTab/record".utf8)
for size in [64, 1024, 16 * 1024, 1024 * 1024] {
    let plaintext = try SecureRandom.bytes(size)
    let nonce = try SecureRandom.bytes(XChaCha20Poly1305.nonceByteCount)
    var sealed: [UInt8] = []
    let sealRate = try rate(for: duration) { sealed = try XChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce, authenticating: associatedData) }
    report("xchacha20-poly1305 seal", bytes: size, callsPerSecond: sealRate)
    let openRate = try rate(for: duration) { _ = try XChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: associatedData) }
    report("xchacha20-poly1305 open", bytes: size, callsPerSecond: openRate)
}
