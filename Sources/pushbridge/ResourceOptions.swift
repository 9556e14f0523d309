import ArgumentParser
import Localization

/// The resource options `lint` and `preview` share.
struct ResourceOptions: ParsableArguments {
    @Option(
        name: .customLong("android-res"), parsing: .upToNextOption,
        help: ArgumentHelp("Android res/ directories (their values*/ folders are read).", valueName: "dir"))
    var androidRes: [String] = []

    @Option(
        name: .customLong("ios"), parsing: .upToNextOption,
        help: ArgumentHelp(
            "iOS directories (searched for *.lproj/Localizable.strings(dict) and Localizable.xcstrings) or files.",
            valueName: "dir-or-file"))
    var ios: [String] = []

    @Option(
        name: .customLong("default-locale"),
        help: ArgumentHelp(
            "The language of Android's values/ and iOS's development language (default: en; on iOS a String Catalog's sourceLanguage).",
            valueName: "tag"))
    var defaultLocale: String?

    func validate() throws {
        if androidRes.isEmpty && ios.isEmpty {
            throw ValidationError("give --android-res and/or --ios: the app's string resources")
        }
    }

    /// The catalogs for the platforms given.
    func catalogs() -> [ResourceCatalog] {
        var catalogs: [ResourceCatalog] = []
        if !androidRes.isEmpty { catalogs.append(ResourceCatalog.loadAndroid(directories: androidRes, defaultLocale: defaultLocale ?? "en")) }
        if !ios.isEmpty { catalogs.append(ResourceCatalog.loadApple(paths: ios, developmentLanguage: defaultLocale)) }
        return catalogs
    }
}
