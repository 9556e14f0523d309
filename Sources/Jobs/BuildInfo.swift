/// What a worker runs: for `pushbridge --version`, the `started` log line and the
/// `pushbridge_build_info` metric.
public struct BuildInfo: Sendable, Equatable {
    public var version: String
    /// The git commit, `+dirty` with uncommitted changes, or `unknown`.
    public var commit: String
    /// The runtime versions of the libraries, not their headers'.
    public var librdkafka: String
    public var libcurl: String
    /// The HTTP/2 client's own engine (FCM's sends): nghttp2's version, with OpenSSL's.
    public var nghttp2: String

    public init(version: String, commit: String, librdkafka: String, libcurl: String, nghttp2: String) {
        self.version = version
        self.commit = commit
        self.librdkafka = librdkafka
        self.libcurl = libcurl
        self.nghttp2 = nghttp2
    }

    /// `pushbridge 0.1.0 (commit 1a2b3c4d5e6f)\nlibrdkafka 2.3.0\nlibcurl 7.88.1 (nghttp2 1.52.0)\nnghttp2 1.52.0 (OpenSSL 3.0.19)`.
    public var description: String {
        "pushbridge \(version) (commit \(commit))\nlibrdkafka \(librdkafka)\nlibcurl \(libcurl)\nnghttp2 \(nghttp2)"
    }

    /// As log metadata and metric labels.
    public var labels: [(String, String)] {
        [("version", version), ("commit", commit), ("librdkafka", librdkafka), ("libcurl", libcurl), ("nghttp2", nghttp2)]
    }
}
