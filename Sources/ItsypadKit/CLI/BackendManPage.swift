extension ManPage {
    /// itsypad-backend(5), written by hand in `itsypad-backend.5` beside this file (the command
    /// table says nothing about the backend's files) and compiled in, so that `itsypad install`
    /// can write it; man/itsypad-backend.5 is a copy, checked by ManPageTests.
    public static let backend = (name: "itsypad-backend.5", text: String(decoding: PackageResources.itsypad_backend_5, as: UTF8.self))
}
