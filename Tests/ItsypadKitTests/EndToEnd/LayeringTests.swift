import Testing

@testable import ItsypadSupport

/// The layers are SwiftPM targets (Package.swift), each depending on every layer below it, so that a
/// layer importing a higher one makes a cycle and `swift build` fails ("circular dependency between
/// modules", or "no such module" in a clean build). The build alone would accept an import of a
/// target that is not a dependency but happens to be built already; these tests keep the chain whole.
@Suite struct LayeringTests {
    static let root: String = {
        var path = #filePath
        for _ in 0..<4 { path = FileSystem.directoryName(path) }
        return path
    }()

    /// Each library target in Package.swift: its name, folder and declared dependencies.
    struct Target {
        let name: String
        let path: String
        let dependencies: [String]
    }

    static func targets() throws -> [Target] {
        let manifest = String(decoding: try #require(try FileSystem.read(root + "/Package.swift")), as: UTF8.self)
        return manifest.split(separator: ".target(").dropFirst().compactMap { declaration in
            func value(_ label: String) -> String? {
                guard let start = declaration.firstRange(of: label + ": \"") else { return nil }
                return String(declaration[start.upperBound...].prefix { $0 != "\"" })
            }
            guard let name = value("name"), let path = value("path") else { return nil }
            let list = declaration.firstRange(of: "dependencies: [").map { declaration[$0.upperBound...].prefix { $0 != "]" } } ?? ""
            return Target(name: name, path: path, dependencies: list.split(separator: ",").map { $0.filter { $0 != "\"" && $0 != " " } })
        }
    }

    static func swiftFiles(in directory: String) throws -> [String] {
        try FileSystem.list(directory).flatMap { name -> [String] in
            let path = directory + "/" + name
            if FileSystem.isDirectory(path) { return try swiftFiles(in: path) }
            return name.hasSuffix(".swift") ? [path] : []
        }
    }

    @Test func everyLayerIsATargetInOrder() throws {
        let targets = try Self.targets()
        #expect(
            targets.map(\.name) == [
                "ItsypadSupport", "ItsypadModel", "ItsypadBackend", "ItsypadStore", "ItsypadSync", "ItsypadDesktop", "ItsypadCLI",
            ])
        for (index, target) in targets.enumerated() {
            #expect(target.dependencies == targets.prefix(index).map(\.name), "\(target.name) depends on exactly the layers below it")
        }
    }

    @Test func sourcesImportOnlyDeclaredDependencies() throws {
        let targets = try Self.targets()
        let modules = Set(targets.map(\.name))
        for target in targets {
            for file in try Self.swiftFiles(in: Self.root + "/" + target.path) {
                let text = String(decoding: try #require(try FileSystem.read(file)), as: UTF8.self)
                for line in text.split(separator: "\n") where line.hasPrefix("import ") {
                    let module = String(line.dropFirst("import ".count))
                    guard modules.contains(module) else { continue }
                    #expect(target.dependencies.contains(module), "\(file) imports \(module), which \(target.name) may not use")
                }
            }
        }
    }
}
