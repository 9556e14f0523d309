import CCurl

/// `curl_global_init` exactly once per process (a Swift global is initialised once, thread-safely).
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}
