import CCurl

/// `curl_global_init` exactly once per process (a Swift global is initialised once, thread-safely).
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

extension HTTP2Client {
    /// The version of the libcurl library in use (which may differ from the headers'), with the
    /// nghttp2 it was built with: `7.88.1 (nghttp2 1.52.0)`.
    public static var libcurlVersion: String {
        guard let info = curl_version_info(CURLVERSION_TENTH) else { return "unknown" }
        let curl = info.pointee.version.map { String(cString: $0) } ?? "unknown"
        guard let nghttp2 = info.pointee.nghttp2_version else { return curl }
        return "\(curl) (nghttp2 \(String(cString: nghttp2)))"
    }
}
