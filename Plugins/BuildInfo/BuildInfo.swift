import Foundation
import PackagePlugin

/// Writes `BuildCommit.swift` (`let buildCommit = "<commit>"`) for the executable: the git
/// commit it is built from, `+dirty` with uncommitted changes, or `unknown` outside a git
/// checkout (e.g. a Docker build context without `.git`). Runs before every build and rewrites the
/// file only when the commit changed, so an unchanged tree recompiles nothing.
@main
struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        let script = #"""
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
            if [ "$commit" != unknown ] && [ -n "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit+dirty"; fi
            mkdir -p "$2"
            line="let buildCommit = \"$commit\""
            [ "$(cat "$2/BuildCommit.swift" 2>/dev/null)" = "$line" ] || printf '%s\n' "$line" > "$2/BuildCommit.swift"
            """#
        return [
            .prebuildCommand(
                displayName: "Recording the git commit of the build",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "build-info", context.package.directoryURL.path, output.path],
                outputFilesDirectory: output)
        ]
    }
}
