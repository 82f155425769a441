import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// The record file readers that skip the decoder (`VersionDocument.read`,
/// `VersionSealer.Content.read`) against `JSONCoding`'s decoder: the same value where it
/// decodes, nil where it throws, for valid documents and every one-step mutation of them.
@Suite("Version document reading")
struct VersionDocumentReadingTests {
    static let documents = [
        #"""
        {"zone":"Z1","version":"dev-a:3","derived":false,"deleted":false,
         "record":{"recordName":"tab-1","recordType":"ScratchTab","recordChangeTag":"dev-a:3",
          "fields":{"content":{"type":"STRING","value":"é\u0000\"x"},"n":{"type":"INT64","value":-9223372036854775808},
           "d":{"type":"DOUBLE","value":0.5},"t":{"type":"TIMESTAMP","value":1732200000000},
           "l":{"type":"STRING_LIST","value":["a","","ü"]},
           "a":{"type":"ASSETID","value":{"fileChecksum":"ab","size":3}}},
          "created":{"timestamp":1,"deviceID":"a"},"modified":{"timestamp":2,"deviceID":"b"}},
         "base":{"version":"dev-a:2","fields":{"content":{"type":"STRING","value":"old"}}}}
        """#,
        #"""
        {"zone":"Z1","version":"dev-a:1,dev-b:4","derived":true,"deleted":true,
         "record":{"recordName":"c","recordType":"Clip","fields":{}}}
        """#,
        #"""
        {"zone":"Z","version":"v","derived":false,"deleted":false,"base":null,"extra":[1,{}],
         "record":{"recordName":"c","recordType":"Clip","recordChangeTag":null,"created":null,
          "fields":{"x":{"value":2.0,"type":"INT64"},"y":{"type":"DOUBLE","value":3}}}}
        """#,
    ]

    static let replacements: [JSONValue] = [
        .null, .bool(true), .integer(7), .integer(.max), .number(1.5), .number(2.0), .number(1e300), .string("x"),
        .string("STRING"), .array([]), .array([.string("a")]), .array([.integer(1)]), .object([]),
        .object([("type", .string("STRING")), ("value", .string("v"))]),
        .object([("fileChecksum", .string("ab")), ("size", .integer(-1))]),
    ]

    /// `value` and each value made from it by removing, replacing or repeating one member or
    /// element anywhere in it, or adding one.
    static func mutations(of value: JSONValue) -> [JSONValue] {
        var result = [value]
        switch value {
        case .object(let members):
            result.append(.object(members + [("extra", .integer(1))]))
            for index in members.indices {
                var removed = members
                removed.remove(at: index)
                result.append(.object(removed))
                result.append(.object(members + [(members[index].0, .string("repeated"))]))
                for replacement in replacements + mutations(of: members[index].1).dropFirst() {
                    var replaced = members
                    replaced[index].1 = replacement
                    result.append(.object(replaced))
                }
            }
        case .array(let items):
            for index in items.indices {
                for replacement in replacements + mutations(of: items[index]).dropFirst() {
                    var replaced = items
                    replaced[index] = replacement
                    result.append(.array(replaced))
                }
            }
        default:
            break
        }
        return result
    }

    /// What the decoder reads in a record file's bytes.
    static func parsed(_ bytes: [UInt8]) -> VersionDocument? {
        try? JSONCoding.decode(VersionDocument.self, from: bytes)
    }

    /// Checks that `read` gives what `decode` gives for `document` and each of its mutations,
    /// compact and pretty; returns how many `decode` accepts and how many `direct` (the reader
    /// alone, without the decoder to fall back on) reads.
    static func readerAgrees<Value: Equatable>(
        on document: JSONValue, read: ([UInt8]) -> Value?, decode: ([UInt8]) -> Value?, direct: ([UInt8]) -> Value?
    ) -> (accepted: Int, direct: Int) {
        var counts = (accepted: 0, direct: 0)
        for mutation in mutations(of: document) {
            for bytes in [mutation.serializedBytes(), mutation.prettySerializedBytes()] {
                let decoded = decode(bytes)
                #expect(read(bytes) == decoded, "\(mutation)")
                if decoded != nil { counts.accepted += 1 }
                if direct(bytes) != nil { counts.direct += 1 }
            }
        }
        return counts
    }

    @Test("a record file reads from its bytes as the decoder reads it", arguments: documents.indices)
    func versionDocumentFromBytes(index: Int) throws {
        let counts = Self.readerAgrees(
            on: try JSONValue.parse(Self.documents[index]), read: VersionDocument.read, decode: Self.parsed,
            direct: { bytes in bytes.withUnsafeBufferPointer { JSONReader.read($0, VersionDocument.init(reader:)) } })
        // Their keys are plain: every one that reads at all reads straight from the bytes.
        #expect(counts.accepted > 20 && counts.direct == counts.accepted)
        #expect(Array(Self.documents[index].utf8).withUnsafeBufferPointer { JSONReader.read($0, VersionDocument.init(reader:)) } != nil)
    }

    /// Byte-level changes a `JSONValue` cannot express: escaped and non-ASCII keys (U+212A KELVIN
    /// SIGN is equal to "K" as a String), a repeated key, deep nesting, every truncation, garbage after.
    @Test("a record file's odd bytes read as the decoder reads them")
    func oddBytes() throws {
        let valid = Self.documents[0]
        var texts = [
            valid.replacingOccurrences(of: #""zone""#, with: #""\u007aone""#),
            valid.replacingOccurrences(of: #""content""#, with: #""cont\u0065nt""#),
            valid.replacingOccurrences(of: #""n":"#, with: #""\u212A":"#),
            valid.replacingOccurrences(of: #""d":"#, with: #""K":"#).replacingOccurrences(of: #""n":"#, with: #""\u212A":"#),
            valid.replacingOccurrences(of: #""n":"#, with: #""é":"#),
            valid.replacingOccurrences(of: #""zone":"Z1","#, with: #""zone":"Z1","zone":"Z1","#),
            valid.replacingOccurrences(of: #""d":{"#, with: #""t":{"#),
            valid.replacingOccurrences(
                of: #""zone""#, with: #""extra":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + #","zone""#),
            valid.replacingOccurrences(
                of: #""zone""#, with: #""extra":"# + String(repeating: "[", count: 509) + String(repeating: "]", count: 509) + #","zone""#),
            valid + " ", valid + " x", " \n" + valid, "[" + valid + "]", valid.replacingOccurrences(of: ",", with: " , "),
        ]
        texts += (0..<valid.utf8.count).map { String(decoding: valid.utf8.prefix($0), as: UTF8.self) }
        for text in texts {
            let bytes = Array(text.utf8)
            #expect(VersionDocument.read(bytes) == Self.parsed(bytes), "\(text)")
        }
        #expect(Self.parsed(Array(texts[0].utf8)) != nil && Self.parsed(Array(texts[2].utf8)) != nil)
        #expect(Self.parsed(Array(texts[3].utf8)) == nil, "U+212A repeats K")
    }

    @Test("sealed content reads as the decoder reads it")
    func sealedContent() throws {
        let content = try JSONValue.parse(
            #"{"fields":{"content":{"type":"STRING","value":"x"},"l":{"type":"STRING_LIST","value":[]}},"base":{"content":{"type":"STRING","value":""}}}"#
        )
        var accepted = 0, readDirectly = 0
        for mutation in Self.mutations(of: content) + Self.mutations(of: .object([("fields", .object([]))])) {
            let bytes = mutation.serializedBytes()
            let decoded = try? JSONCoding.decode(VersionSealer.Content.self, from: bytes)
            let read = VersionSealer.Content.read(bytes)
            // Read without the decoder only where the decoder reads the same; the rest is left to it.
            #expect(read == nil || read == decoded, "\(mutation)")
            if decoded != nil { accepted += 1 }
            if read != nil { readDirectly += 1 }
        }
        #expect(accepted > 20 && readDirectly == accepted)
    }

    @Test("a version document's writer writes the bytes of JSONCoding, its record given encoded or not", arguments: [0, 1])
    func writerAgreesWithTheEncoder(index: Int) throws {
        let document = try JSONCoding.decode(VersionDocument.self, from: Array(Self.documents[index].utf8))
        var variants = [document]
        var noBase = document
        noBase.base = nil
        variants.append(noBase)
        for variant in variants {
            let expected = try JSONCoding.encode(variant)
            #expect(try variant.encoded() == expected)
            #expect(try variant.encoded(record: JSONCoding.encode(variant.record)) == expected)
            #expect(VersionDocument.read(try variant.encoded()) == variant)
        }
    }
}
