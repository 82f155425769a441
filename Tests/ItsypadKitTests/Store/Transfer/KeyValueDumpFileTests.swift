import Testing

@testable import ItsypadStore

/// `import --kvs` reads a dump of the app's key-value layout through `KeyValueDumpFile`: what it
/// accepts, what it ignores, and each refusal with its message (nothing imported then).
@Suite("Store: key-value dumps")
struct KeyValueDumpFileTests {
    static let tabID = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
    static let clipID = "8F9619FF-8B86-D011-B42D-00C04FC964FF"

    static func tab(_ members: String) -> String { #"{"id":"\#(tabID)","content":"print(1)","lastModified":754000000\#(members)}"# }
    static let clip = #"{"id":"\#(clipID)","text":"kept clip","timestamp":754000001}"#

    /// A dump, and the tab name and clip listing it imports.
    static let accepted: [(String, String, String?, String)] = [
        (
            "a tab with every member the app wrote",
            #"{"tabs":[\#(tab(#","name":"Kept","language":"python","languageLocked":true,"isDirty":false"#))]}"#, "Kept", ""
        ),
        ("a name that is not a string: derived from the content", #"{"tabs":[\#(tab(#","name":5"#))]}"#, "print(1)", ""),
        (
            "a language or lock that is not one is ignored", #"{"tabs":[\#(tab(#","name":"K","language":[1],"languageLocked":"yes""#))]}"#,
            "K", ""
        ),
        ("a file-backed tab is not imported", #"{"tabs":[\#(tab(#","name":"K","fileURL":"/tmp/k""#))]}"#, nil, ""),
        ("a fileURL that is not a string is ignored", #"{"tabs":[\#(tab(#","name":"K","fileURL":5"#))]}"#, "K", ""),
        (
            "deleted ids in any case; anything but a string among them is ignored",
            #"{"tabs":[\#(tab(#","name":"K""#))],"deletedTabIDs":[1,null,"\#(tabID.lowercased())"]}"#, nil, ""
        ),
        ("a null key is absent", #"{"tabs":null,"clipboard":[\#(clip)],"deletedClipboardIDs":null}"#, nil, "8f9619ff\tkept clip\n"),
        ("a blank clip is not imported", #"{"clipboard":[{"id":"\#(clipID)","text":" \n","timestamp":1.5}]}"#, nil, ""),
        ("a deleted clip is not imported", #"{"clipboard":[\#(clip)],"deletedClipboardIDs":["\#(clipID)"]}"#, nil, ""),
    ]

    @Test("a dump imports what it holds, as before", arguments: accepted)
    func imports(_ example: (name: String, dump: String, tabName: String?, clips: String)) {
        let device = Device()
        let (status, _, err) = device.inProcess(["import", "--kvs", "-"], stdin: example.dump)
        #expect(status == 0, "\(err)")
        let tabs = device.inProcess(["tab", "ls"]).1
        if let name = example.tabName { #expect(tabs.contains(name), "\(tabs)") } else { #expect(tabs.isEmpty, "\(tabs)") }
        #expect(device.inProcess(["clip", "ls"]).1 == example.clips)
    }

    static let invalidTab = "a tab in the key-value dump is invalid; nothing was imported"
    static let invalidClip = "a clipboard entry in the key-value dump is invalid; nothing was imported"

    /// A dump, and the refusal it gets.
    static let refused: [(String, String, String)] = [
        (
            "no tabs or clipboard key", #"{"deletedTabIDs":[]}"#,
            "not an Itsypad key-value dump (no tabs or clipboard key); nothing was imported"
        ),
        ("not an object", #"[]"#, "not an Itsypad key-value dump"),
        ("a tab id that is not a UUID", #"{"tabs":[{"id":"x","content":"c","lastModified":1}]}"#, invalidTab),
        ("a tab without content", #"{"tabs":[{"id":"\#(tabID)","lastModified":1}]}"#, invalidTab),
        ("content that is not a string", #"{"tabs":[{"id":"\#(tabID)","content":1,"lastModified":1}]}"#, invalidTab),
        ("a time that is not a number", #"{"tabs":[{"id":"\#(tabID)","content":"c","lastModified":"1"}]}"#, invalidTab),
        ("a time after 9999", #"{"tabs":[{"id":"\#(tabID)","content":"c","lastModified":1e300}]}"#, invalidTab),
        ("a tab that is not an object", #"{"tabs":[\#(tab("")),1]}"#, invalidTab),
        ("a clip without a timestamp", #"{"clipboard":[{"id":"\#(clipID)","text":"t"}]}"#, invalidClip),
        ("a clip id that is not a UUID", #"{"clipboard":[{"id":"c","text":"t","timestamp":1}]}"#, invalidClip),
        ("an invalid tab is met before the clipboard's form", #"{"tabs":[1],"clipboard":42}"#, invalidTab),
        (
            "the deleted ids' form is met before an invalid tab", #"{"tabs":[1],"deletedTabIDs":"nope"}"#,
            "the key-value dump's deletedTabIDs is neither"
        ),
    ]

    @Test("a dump is refused as before, and nothing is imported", arguments: refused)
    func refuses(_ example: (name: String, dump: String, message: String)) {
        let device = Device()
        let (status, _, err) = device.inProcess(["import", "--kvs", "-"], stdin: example.dump)
        #expect(status == 1)
        #expect(err.contains(example.message), "\(err)")
        #expect(device.inProcess(["tab", "ls"]).1.isEmpty)
        #expect(device.inProcess(["clip", "ls"]).1.isEmpty)
    }
}
