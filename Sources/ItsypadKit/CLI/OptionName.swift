/// The long name of an option, as a command's action reads it
/// (`invocation.flag(.json)`), so a misspelt name does not compile.
///
/// The cases are exactly the option names in ``CommandTable``, and each command
/// reads only the options its table entry lists (or the global ones):
/// CommandTableTests checks both.
public enum OptionName: String, CaseIterable, Sendable {
    case all
    case autoLanguage = "auto-language"
    case create
    case dataDirectory = "data-dir"
    case deviceSettings = "device-settings"
    case encrypt
    case file
    case follow
    case from
    case help
    case includeSyncKey = "include-sync-key"
    case interval
    case json
    case keep
    case key
    case kvs
    case language
    case limit
    case local
    case name
    case noEncrypt = "no-encrypt"
    case olderThan = "older-than"
    case osc52
    case pinned
    case prefix
    case primary
    case quiet
    case search
    case type
    case version
}
