import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// `sync/state.json` is kept across upgrades: these bytes were written by the release before
/// `EngineStateFile`, and must stay readable and written the same both ways.
@Suite("Store: engine state file")
struct EngineStateFileTests {
    static let everything: EngineState = {
        var state = EngineState()
        state.zoneID = "Z1"
        state.token = "1:Z1:42"
        state.lastPush = 1_700_000_000_000
        state.lastPull = 1_700_000_005_000
        state.lastError = "the backend said \"no\"\n\u{1}é"
        state.failures = [
            RecordKey(.tab, "b"): EngineState.Failure(attempts: 3, error: "too large"),
            RecordKey(.clip, "z"): EngineState.Failure(attempts: EngineState.maxAttempts, error: "ü"),
            RecordKey(.tab, "a"): EngineState.Failure(attempts: 0, error: ""),
        ]
        state.queueID = "q-1"
        state.fullFetch = .expired
        state.quarantine = [
            EngineState.Quarantined(key: RecordKey(.tab, "x"), location: "records/ScratchTab/x.json", reason: "not JSON", since: 5),
            EngineState.Quarantined(key: nil, location: "journal/0001 line 3", reason: "names no record", since: 9_999),
        ]
        state.waiting = [EngineState.Waiting(path: "devices/a/0001", reason: "partial", since: 7)]
        state.unknownTypes = ["Snippet", "Note"]
        return state
    }()

    static let golden: [(String, EngineState, String)] = [
        (
            "a state that never synced",
            EngineState(),
            """
            {
              "zoneID": null,
              "token": null,
              "lastPush": null,
              "lastPull": null,
              "lastError": null,
              "failures": [],
              "queueID": null,
              "fullFetch": null,
              "quarantine": [],
              "waiting": [],
              "unknownTypes": []
            }

            """
        ),
        (
            "a state with every value set",
            everything,
            #"""
            {
              "zoneID": "Z1",
              "token": "1:Z1:42",
              "lastPush": 1700000000000,
              "lastPull": 1700000005000,
              "lastError": "the backend said \"no\"\n\u0001é",
              "failures": [
                {
                  "type": "ClipboardEntry",
                  "id": "z",
                  "attempts": 1000000,
                  "error": "ü"
                },
                {
                  "type": "ScratchTab",
                  "id": "a",
                  "attempts": 0,
                  "error": ""
                },
                {
                  "type": "ScratchTab",
                  "id": "b",
                  "attempts": 3,
                  "error": "too large"
                }
              ],
              "queueID": "q-1",
              "fullFetch": "expired",
              "quarantine": [
                {
                  "type": "ScratchTab",
                  "id": "x",
                  "location": "records/ScratchTab/x.json",
                  "reason": "not JSON",
                  "since": 5
                },
                {
                  "type": null,
                  "id": null,
                  "location": "journal/0001 line 3",
                  "reason": "names no record",
                  "since": 9999
                }
              ],
              "waiting": [
                {
                  "path": "devices/a/0001",
                  "reason": "partial",
                  "since": 7
                }
              ],
              "unknownTypes": [
                "Note",
                "Snippet"
              ]
            }

            """#
        ),
    ]

    @Test("the state is written byte for byte as before, and what was written before reads back the same", arguments: golden)
    func writtenAsBefore(_ golden: (name: String, state: EngineState, bytes: String)) throws {
        let directory = TemporaryDirectory()
        let store = try DataStore(path: directory.path + "/data", lockTimeout: 1)
        try golden.state.save(to: store)
        let path = directory.path + "/data/sync/state.json"
        #expect(String(decoding: try #require(try FileSystem.read(path)), as: UTF8.self) == golden.bytes)
        try FileSystem.writeAtomically(path, Array(golden.bytes.utf8))
        #expect(try EngineState.load(from: store) == golden.state)
    }

    @Test(
        "files from older versions and out-of-range values: absent lists are empty, bad times and type names are dropped one by one",
        arguments: [
            (#"{"zoneID":"Z","token":"t","lastPush":null,"lastPull":5,"lastError":null,"failures":[]}"#, "Z t - 5 0 0 0 0"),
            (
                #"{"zoneID":"Z","lastPush":-1,"lastPull":9223372036854775807,"failures":[{"type":"ScratchTab","id":"x","attempts":9223372036854775807,"error":"e"},{"type":"no such/type","id":"y","attempts":1,"error":"e"}]}"#,
                "Z - - - 1 0 0 0"
            ),
            (
                #"{"quarantine":[{"type":"ScratchTab","location":"l","reason":"r","since":-5}],"waiting":[{"path":"p","reason":"r","since":-1}],"unknownTypes":["Note","bad/name"],"extra":1}"#,
                "- - - - 0 1 0 1"
            ),
        ])
    func older(_ file: (text: String, summary: String)) throws {
        let directory = TemporaryDirectory()
        let store = try DataStore(path: directory.path + "/data", lockTimeout: 1)
        try FileSystem.writeAtomically(directory.path + "/data/sync/state.json", Array(file.text.utf8))
        let state = try EngineState.load(from: store)
        #expect(state.damage == nil)
        let times: [String] = [state.lastPush, state.lastPull].map { $0.map { String($0) } ?? "-" }
        let counts: [Int] = [state.failures.count, state.quarantine.count, state.waiting.count, state.unknownTypes.count]
        let summary: [String] = [state.zoneID ?? "-", state.token ?? "-"] + times + counts.map { String($0) }
        #expect(summary.joined(separator: " ") == file.summary)
        #expect(state.failures.values.allSatisfy { $0.attempts <= EngineState.maxAttempts })
        #expect(state.quarantine.allSatisfy { $0.key == nil && Time.validRange.contains($0.since) })
    }

    @Test(
        "a file that does not follow the format is damage: sync starts over by itself",
        arguments: [
            "[]", #"{"zoneID":"../x"}"#, #"{"zoneID":5}"#, #"{"failures":[{"type":"ScratchTab","id":"x","attempts":"3","error":"e"}]}"#,
        ])
    func damaged(_ text: String) throws {
        let directory = TemporaryDirectory()
        let store = try DataStore(path: directory.path + "/data", lockTimeout: 1)
        try FileSystem.writeAtomically(directory.path + "/data/sync/state.json", Array(text.utf8))
        let state = try EngineState.load(from: store)
        #expect(state.damage != nil && state.zoneID == nil && state.failures.isEmpty)
    }
}
