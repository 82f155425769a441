import ItsypadBackend
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

// crypto-bench: throughput of the project's AEAD and record cipher, for
// Tests/Benchmarks/crypto-bench.sh. Not part of the itsypad command.
// Usage: crypto-bench [SECONDS-PER-MEASUREMENT]
// Prints one line per measurement: NAME <TAB> BYTES-PER-CALL <TAB> MiB/s <TAB> calls/s
// (for records, BYTES-PER-CALL is the size of the tab's content). Uses the package-internal
// JSONCoding to measure the plain record file's cost as the baseline.

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
    let sealRate = try rate(for: duration) {
        sealed = try XChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce, authenticating: associatedData)
    }
    report("xchacha20-poly1305 seal", bytes: size, callsPerSecond: sealRate)
    let openRate = try rate(for: duration) {
        _ = try XChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: associatedData)
    }
    report("xchacha20-poly1305 open", bytes: size, callsPerSecond: openRate)
}

// A tab as the sync engine maps it (fields of RecordMapping), with 1 KiB of content.
let content = String(repeating: "a line of a scratch tab, ", count: 41).prefix(1024)
let tab = BackendRecord(
    recordName: "5d1c8a4e-2b3f-4c6d-8e9f-0a1b2c3d4e5f", recordType: "ScratchTab",
    fields: [
        "name": .string("notes"), "nameLocked": .int64(0), "language": .string("markdown"), "languageLocked": .int64(0),
        "lastModified": .timestamp(1_790_000_000_000), "clock": .string("1790000000000-0-device"), "deviceName": .string("laptop"),
        "content": .string(String(content)),
    ])
let cipher = try RecordCipher(masterKey: key)
let context = RecordCipher.lengthPrefixed(["itsypad record", "zone", tab.recordType, tab.recordName])

/// The record with its fields sealed into one field, as an encrypted backend stores them.
func sealed(_ record: BackendRecord) throws -> BackendRecord {
    var sealed = record
    sealed.fields = [
        RecordCipher.sealedFieldName: .string(try cipher.sealRecordContent(try JSONCoding.encode(record.fields), context: context))
    ]
    return sealed
}

/// The fields sealed in `record`.
func openedFields(_ record: BackendRecord) throws -> [String: FieldValue] {
    guard case .string(let text)? = record.fields[RecordCipher.sealedFieldName] else { throw RecordCipherError.notSealed }
    return try JSONCoding.decode([String: FieldValue].self, from: try cipher.openRecordContent(text, context: context))
}

// What writing and reading a record file costs today (encode, decode), against the same
// with the record sealed first and opened after: the per-record CPU an encrypted sync adds.
let plainFile = try JSONCoding.encode(tab)
let sealedFile = try JSONCoding.encode(try sealed(tab))
let bytes = content.utf8.count
let plainWrite = try rate(for: duration) { _ = try JSONCoding.encode(tab) }
report("record write, plain (1 KiB tab)", bytes: bytes, callsPerSecond: plainWrite)
let sealedWrite = try rate(for: duration) { _ = try JSONCoding.encode(try sealed(tab)) }
report("record write, sealed (1 KiB tab)", bytes: bytes, callsPerSecond: sealedWrite)
let plainRead = try rate(for: duration) { _ = try JSONCoding.decode(BackendRecord.self, from: plainFile) }
report("record read, plain (1 KiB tab)", bytes: bytes, callsPerSecond: plainRead)
let sealedRead = try rate(for: duration) { _ = try openedFields(try JSONCoding.decode(BackendRecord.self, from: sealedFile)) }
report("record read, sealed (1 KiB tab)", bytes: bytes, callsPerSecond: sealedRead)
