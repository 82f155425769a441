import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// The journal line reader that skips the decoder (`DeviceBatch.read`) against `JSONCoding`'s
/// decoder: the same value where it decodes, nil where it throws, for valid lines and every
/// one-step mutation of them.
@Suite("Device batch reading")
struct DeviceBatchReadingTests {
    static let lines = [
        #"""
        {"seq":3,"changes":[
          {"seq":3,"op":"save","recordType":"ScratchTab","recordName":"tab-1","version":
           {"zone":"Z1","version":"dev-a:3","derived":false,"deleted":false,
            "record":{"recordName":"tab-1","recordType":"ScratchTab","fields":{"content":{"type":"STRING","value":"é\"x"}}}}},
          {"seq":4,"op":"drop","recordType":"Clip","recordName":"c","drop":{"version":"dev-a:1","coveredBy":{"device":"dev-b","seq":9}}},
          {"seq":5,"op":"delete","recordType":"Clip","recordName":"d","version":
           {"zone":"Z1","version":"dev-a:5","derived":false,"deleted":true,"record":{"recordName":"d","recordType":"Clip","fields":{}}}}],
         "device":"dev-a","files":"00ff","instance":"i-1","time":1732200000000,"zone":"Z1"}
        """#,
        #"""
        {"seq":7,"changes":[{"seq":7,"op":"checkpoint","checkpoint":{"requires":{"dev-b":4,"dev-c":1}},
          "recordType":null,"version":null,"drop":null}],
         "device":"dev-a","files":"","instance":"i","time":0,"zone":"Z","extra":[1,{}]}
        """#,
    ]

    static func parsed(_ bytes: [UInt8]) -> DeviceBatch? {
        try? JSONCoding.decode(DeviceBatch.self, from: bytes)
    }

    static func readDirectly(_ bytes: [UInt8]) -> DeviceBatch? {
        bytes.withUnsafeBufferPointer { JSONReader.read($0, DeviceBatch.init(reader:)) }
    }

    @Test("a journal line reads from its bytes as the decoder reads it", arguments: lines.indices)
    func deviceBatchFromBytes(index: Int) throws {
        let counts = VersionDocumentReadingTests.readerAgrees(
            on: try JSONValue.parse(Self.lines[index]), read: { DeviceBatch.read($0[...]) }, decode: Self.parsed,
            direct: Self.readDirectly)
        // Their keys are plain: every one that reads at all reads straight from the bytes.
        #expect(counts.accepted > 20 && counts.direct == counts.accepted)
    }

    /// The writer writes what `JSONCoding` encodes, each version document once for the line and
    /// its record file, and that reads back straight from its bytes.
    @Test("an encoded line is the encoder's, and reads straight from its bytes")
    func encodedLines() throws {
        for text in Self.lines {
            let batch = try #require(Self.parsed(Array(text.utf8)))
            let (line, versions) = try batch.encoded()
            // The encoder's, with "seq" first (see `DeviceJournal.line`).
            guard case .object(var fields) = try JSONCoding.encodeValue(batch) else {
                Issue.record("a batch encodes as an object")
                return
            }
            fields.sort { $0.0 == "seq" || ($1.0 != "seq" && $0.0 < $1.0) }
            #expect(line == JSONValue.object(fields).serializedBytes() + [UInt8(ascii: "\n")])
            #expect(versions == (try batch.changes.map { try $0.version.map { try JSONCoding.encode($0) } }))
            #expect(Self.readDirectly(Array(line.dropLast())) == batch)
        }
    }

    /// Byte-level changes a `JSONValue` cannot express: escaped keys and values, a repeated key,
    /// every truncation, garbage after.
    @Test("a journal line's odd bytes read as the decoder reads them")
    func oddBytes() throws {
        let valid = Self.lines[0]
        var texts = [
            valid.replacingOccurrences(of: #""seq":3,"#, with: #""s\u0065q":3,"#),
            valid.replacingOccurrences(of: #""op":"save""#, with: #""op":"sav\u0065""#),
            valid.replacingOccurrences(of: #""device":"dev-a""#, with: #""device":"dev-a","device":"dev-a""#),
            valid.replacingOccurrences(of: #""seq":3,"#, with: #""seq":3.0,"#),
            valid + " ", valid + " x", "[" + valid + "]",
        ]
        texts += (0..<valid.utf8.count).map { String(decoding: valid.utf8.prefix($0), as: UTF8.self) }
        for text in texts {
            let bytes = Array(text.utf8)
            #expect(DeviceBatch.read(bytes[...]) == Self.parsed(bytes), "\(text)")
        }
        #expect(Self.parsed(Array(texts[1].utf8)) != nil)
    }
}
