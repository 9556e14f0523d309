import HTTP2
import Jobs
import Kafka

extension BuildInfo {
    /// This build: pushbridge's version, the git commit (written by the BuildInfo plugin), and
    /// the librdkafka, libcurl, nghttp2 and OpenSSL it runs with, read from the loaded libraries.
    static let current = BuildInfo(
        version: "0.1.0", commit: buildCommit, librdkafka: KafkaConsumer.librdkafkaVersion, libcurl: HTTP2Client.libcurlVersion,
        nghttp2: "\(HTTP2Client.nghttp2Version) (OpenSSL \(HTTP2Client.openSSLVersion))")
}
