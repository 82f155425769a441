import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("Key file")
struct KeyFileTests {
    static let name = "sync-key"
    static let text = header + line + "\n"

    @Test("a written key is a 0600 file in the documented form and reads back")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        try KeyFile.write(sequentialKey, to: directory.file(Self.name))
        let path = directory.file(Self.name)
        #expect(directory.read(Self.name) == Self.text)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try KeyFile.read(directory.file(Self.name))?.bytes == sequentialKey.bytes)
        // Replacing it leaves only the new key.
        let next = try SecretBytes.random(count: 32)
        try KeyFile.write(next, to: directory.file(Self.name))
        #expect(try KeyFile.read(directory.file(Self.name))?.isEqual(to: next) == true)
        #expect(try FileSystem.list(directory.path, includingHidden: true) == [Self.name])
    }

    @Test("no file is no key")
    func missing() throws {
        #expect(try KeyFile.read(TemporaryDirectory().file(Self.name)) == nil)
    }

    @Test("a file others can read is refused")
    func permissions() throws {
        let directory = TemporaryDirectory()
        directory.write(Self.name, Self.text, mode: 0o644)
        chmod(directory.file(Self.name), 0o644)
        #expect(throws: KeyFileError.insecurePermissions(directory.file(Self.name), mode: 0o644)) {
            try KeyFile.read(directory.file(Self.name))
        }
    }

    @Test("symlinks, directories and FIFOs are refused without being followed or blocking")
    func notRegular() throws {
        let directory = TemporaryDirectory()
        let path = directory.file(Self.name)
        directory.write("elsewhere", Self.text, mode: 0o600)
        #expect(symlink(directory.file("elsewhere"), path) == 0)
        #expect(throws: KeyFileError.notARegularFile(path)) { try KeyFile.read(directory.file(Self.name)) }
        unlink(path)
        #expect(mkfifo(path, 0o600) == 0)
        #expect(throws: KeyFileError.notARegularFile(path)) { try KeyFile.read(directory.file(Self.name)) }
        unlink(path)
        #expect(mkdir(path, 0o700) == 0)
        #expect(throws: KeyFileError.notARegularFile(path)) { try KeyFile.read(directory.file(Self.name)) }
    }

    @Test("a file owned by another user is refused", .enabled(if: geteuid() == 0, "only root can give a file away"))
    func owner() throws {
        let directory = TemporaryDirectory()
        directory.write(Self.name, Self.text, mode: 0o600)
        #expect(chown(directory.file(Self.name), 12345, 12345) == 0)
        #expect(throws: KeyFileError.wrongOwner(directory.file(Self.name))) { try KeyFile.read(directory.file(Self.name)) }
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
        directory.write(Self.name, content, mode: 0o600)
        #expect { try KeyFile.read(directory.file(Self.name)) } throws: { error in
            guard case KeyFileError.malformed(let path, let message) = error else { return false }
            return path == directory.file(Self.name) && message.contains(reason)
        }
    }
}
