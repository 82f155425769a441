import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("Key file")
struct KeyFileTests {
    static let text = header + line + "\n"

    @Test("a written key is a 0600 file in the documented form and reads back")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        try KeyFile.write(sequentialKey, inDirectory: directory.path)
        let path = directory.file(KeyFile.fileName)
        #expect(directory.read(KeyFile.fileName) == Self.text)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try KeyFile.read(inDirectory: directory.path)?.bytes == sequentialKey.bytes)
        // Replacing it leaves only the new key.
        let next = try SecretBytes.random(count: 32)
        try KeyFile.write(next, inDirectory: directory.path)
        #expect(try KeyFile.read(inDirectory: directory.path)?.isEqual(to: next) == true)
        #expect(try FileSystem.list(directory.path, includingHidden: true) == [KeyFile.fileName])
    }

    @Test("no file is no key")
    func missing() throws {
        #expect(try KeyFile.read(inDirectory: TemporaryDirectory().path) == nil)
    }

    @Test("a file others can read is refused")
    func permissions() throws {
        let directory = TemporaryDirectory()
        directory.write(KeyFile.fileName, Self.text, mode: 0o644)
        chmod(directory.file(KeyFile.fileName), 0o644)
        #expect(throws: KeyFileError.insecurePermissions(directory.file(KeyFile.fileName), mode: 0o644)) {
            try KeyFile.read(inDirectory: directory.path)
        }
    }

    @Test("symlinks, directories and FIFOs are refused without being followed or blocking")
    func notRegular() throws {
        let directory = TemporaryDirectory()
        let path = directory.file(KeyFile.fileName)
        directory.write("elsewhere", Self.text, mode: 0o600)
        #expect(symlink(directory.file("elsewhere"), path) == 0)
        #expect(throws: KeyFileError.notARegularFile(path)) { try KeyFile.read(inDirectory: directory.path) }
        unlink(path)
        #expect(mkfifo(path, 0o600) == 0)
        #expect(throws: KeyFileError.notARegularFile(path)) { try KeyFile.read(inDirectory: directory.path) }
        unlink(path)
        #expect(mkdir(path, 0o700) == 0)
        #expect(throws: KeyFileError.notARegularFile(path)) { try KeyFile.read(inDirectory: directory.path) }
    }

    @Test("a file owned by another user is refused", .enabled(if: geteuid() == 0, "only root can give a file away"))
    func owner() throws {
        let directory = TemporaryDirectory()
        directory.write(KeyFile.fileName, Self.text, mode: 0o600)
        #expect(chown(directory.file(KeyFile.fileName), 12345, 12345) == 0)
        #expect(throws: KeyFileError.wrongOwner(directory.file(KeyFile.fileName))) { try KeyFile.read(inDirectory: directory.path) }
    }

    static let header = "itsypad sync key v1\n"
    static let line = "000GD-40R4X-0M300-E209K-185G3-R38ED-1W811-24GKZ-2GAH1-C5RR2-34D1B-P70XX-3RFGZ"
    static let malformedFiles: [(String, String)] = [
        ("itsypad sync key v2\n" + line + "\n", "not an itsypad key file"),
        (header + line, "not an itsypad key file"),
        (header + line + "\nextra\n", "this one has 70"),
        (header + line.lowercased() + "\n", "not in the form itsypad writes"),
        (header + line.replacing("-", with: " ") + "\n", "not in the form itsypad writes"),
        (header + line.replacing("40R4X", with: "40R4Y") + "\n", "group 2 of the recovery key has a typo"),
        (header + line + "\n" + String(repeating: "#", count: 300), "larger than a key file"),
        ("", "not an itsypad key file"),
    ]

    @Test("anything but the exact form is refused", arguments: malformedFiles)
    func strict(content: String, reason: String) {
        let directory = TemporaryDirectory()
        directory.write(KeyFile.fileName, content, mode: 0o600)
        #expect { try KeyFile.read(inDirectory: directory.path) } throws: { error in
            guard case KeyFileError.malformed(let path, let message) = error else { return false }
            return path == directory.file(KeyFile.fileName) && message.contains(reason)
        }
    }
}
