import CCurl
import Threading

/// One request in flight: its easy handle, buffers and what to call with its outcome.
///
/// Lives on the multi thread only. libcurl reaches it through `CURLOPT_PRIVATE`,
/// `CURLOPT_WRITEDATA` and `CURLOPT_HEADERDATA`, stored unretained: the multi loop keeps every
/// active transfer in its `active` table until the handle is removed from the multi handle, after
/// which libcurl makes no more callbacks.
///
/// `@unchecked Sendable`: created by the sending task and handed to the multi thread once,
/// through the loop's locked queue; from then on only the multi thread touches it.
final class CurlTransfer: @unchecked Sendable {
    /// Called once, on the multi thread (or the submitting one, when the loop is shut down):
    /// it must not block.
    typealias Completion = @Sendable (Result<CurlResponse, HTTP2ClientError>) -> Void

    let request: HTTPRequest
    private let completion: Completion
    var easy: CurlEasyHandle?
    /// libcurl has reported it done (its handle may serve another transfer since).
    var isFinished = false
    /// When it may go, if it is paced and its slot is reserved (``RequestPacer``).
    var slot: ContinuousClock.Instant?
    /// When it was handed to libcurl.
    var startedAt = ContinuousClock.now
    /// The local port of the connection it went on, once libcurl has one for it
    /// (`CURLOPT_PREREQFUNCTION`, called as a new connection is up or a reused one confirmed):
    /// `CURLINFO_ACTIVESOCKET` names no connection while a transfer runs in libcurl 7.88.
    var localPort: Int?
    /// Its connection was judged dead (``ConnectionLiveness``) and closed while it waited: a
    /// failure is ``HTTP2ClientError/Code/deadConnection``, whatever libcurl made of the close.
    var connectionDied = false
    /// Kept alive while libcurl may read it; shared by transfers with the same headers.
    private var headerList: CurlHeaderList?
    /// The request body, owned here so its address is stable while libcurl reads it.
    private let body: UnsafeMutableRawBufferPointer
    /// The response's header lines as libcurl delivered them (the status line left out); parsed
    /// by the caller, off the multi thread.
    private(set) var responseHeaderBytes: [UInt8] = []
    private(set) var responseBody: [UInt8] = []

    init(request: HTTPRequest, completion: @escaping Completion) {
        self.request = request
        self.completion = completion
        body = .allocate(byteCount: max(request.body.count, 1), alignment: 1)
        body.copyBytes(from: request.body)
    }

    deinit {
        body.deallocate()
    }

    /// Applies this request's options to `easy`, a handle from ``CurlEasyHandle/makePooled(_:connections:)``
    /// whose fixed options are already set. Every per-request option is set each time, so
    /// nothing from a previous request leaks into this one.
    func configure(_ easy: CurlEasyHandle, _ config: HTTP2Client.Configuration, headers: CurlHeaderList) throws(HTTP2ClientError) {
        self.easy = easy
        self.headerList = headers
        let me = Unmanaged.passUnretained(self).toOpaque()
        easy.set(CURLOPT_PRIVATE, pointer: me)
        easy.errorBuffer[0] = 0  // libcurl empties it too as the transfer starts
        easy.set(CURLOPT_WRITEDATA, pointer: me)
        easy.set(CURLOPT_HEADERDATA, pointer: me)
        easy.set(CURLOPT_PREREQDATA, pointer: me)
        guard easy.set(CURLOPT_URL, string: request.url) == CURLE_OK else {
            throw HTTP2ClientError(code: .invalidRequest, message: "bad URL \(request.url)", isRetryable: false)
        }
        // Its timeout from now, as libcurl counts it (from the add), or what is left until its
        // `notAfter` if less (at least 1 ms: 0 would mean none).
        let timeout = request.timeout ?? config.requestTimeout
        easy.set(CURLOPT_TIMEOUT_MS, max(1, request.notAfter.map { min(timeout, $0 - .now) }?.wholeMilliseconds ?? timeout.wholeMilliseconds))
        switch request.method {
        case "GET":
            // No body pointer from an earlier request may stay set (and POSTFIELDS must be set
            // before HTTPGET, because setting it switches the method back to POST).
            easy.set(CURLOPT_POSTFIELDS, pointer: nil)
            easy.set(CURLOPT_HTTPGET, 1)
            easy.set(CURLOPT_CUSTOMREQUEST, pointer: nil)
        case "POST":
            easy.set(CURLOPT_POST, 1)
            easy.set(CURLOPT_CUSTOMREQUEST, pointer: nil)
        default:
            easy.set(CURLOPT_POST, 1)
            easy.set(CURLOPT_CUSTOMREQUEST, string: request.method)
        }
        if request.method != "GET" {
            easy.set(CURLOPT_POSTFIELDS, pointer: body.baseAddress)
            easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(request.body.count))
        }
        easy.set(CURLOPT_HTTPHEADER, pointer: headers.pointer)
    }

    /// Hands the outcome to whoever submitted the transfer. Once per transfer.
    func complete(_ outcome: Result<CurlResponse, HTTP2ClientError>) {
        completion(outcome)
    }

    fileprivate func appendBody(_ bytes: UnsafeRawBufferPointer) {
        responseBody.append(contentsOf: bytes)
    }

    fileprivate func appendHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        if bytes.starts(with: "HTTP/".utf8) {
            responseHeaderBytes.removeAll(keepingCapacity: true)  // a new response (e.g. after 100 Continue)
        } else {
            // One allocation for a usual answer's lines rather than one per doubling.
            if responseHeaderBytes.isEmpty { responseHeaderBytes.reserveCapacity(Self.headerCapacity) }
            responseHeaderBytes.append(contentsOf: bytes)
        }
    }

    /// Room for a usual answer's header lines (FCM's and nginx's are under 200 bytes).
    static let headerCapacity = 256

    /// The outcome after libcurl reported the transfer done with `result`; `proxy` is the
    /// client's, named in errors.
    func outcome(_ result: CURLcode, proxy: HTTPProxy?) -> Result<CurlResponse, HTTP2ClientError> {
        guard let easy else { return .failure(.shutdownError) }
        if result != CURLE_OK, connectionDied { return .failure(.deadConnection(to: request.authority, through: proxy)) }
        guard result == CURLE_OK else { return .failure(error(for: result, proxy: proxy)) }
        let version: String
        switch easy.info(CURLINFO_HTTP_VERSION) {
        case CURL_HTTP_VERSION_2_0: version = "HTTP/2"
        case CURL_HTTP_VERSION_1_1: version = "HTTP/1.1"
        case CURL_HTTP_VERSION_1_0: version = "HTTP/1.0"
        default: version = "HTTP/?"
        }
        // Pretransfer: the request is about to go out (connected, a stream free); total: the
        // answer is in (answers are small). Not starttransfer: libcurl 7.88 sets that when a
        // POST's body has gone out, microseconds after pretransfer.
        let answered = easy.info(offset: CURLINFO_TOTAL_TIME_T) - easy.info(offset: CURLINFO_PRETRANSFER_TIME_T)
        return .success(
            CurlResponse(
                status: easy.info(CURLINFO_RESPONSE_CODE), headerBytes: responseHeaderBytes, body: responseBody, httpVersion: version,
                answerTime: answered >= 0 ? .microseconds(answered) : nil))
    }

    private func error(for result: CURLcode, proxy: HTTPProxy?) -> HTTP2ClientError {
        let detail = easy.map { String(cString: $0.errorBuffer) } ?? ""
        let message = detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail
        if let proxy, let refusal = tunnelRefusal(result, proxy: proxy) { return refusal }
        let (code, retryable): (HTTP2ClientError.Code, Bool) =
            switch result {
            case CURLE_OPERATION_TIMEDOUT: (.timeout, true)
            case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST: (.couldNotConnect, true)
            case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_SSL_ISSUER_ERROR:
                (.tls, false)
            case CURLE_SSL_CONNECT_ERROR: (.tls, true)  // also what a handshake cut short looks like
            case CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE:
                (.connectionClosed, true)
            case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL: (.invalidRequest, false)
            case CURLE_COULDNT_RESOLVE_PROXY, CURLE_PROXY: (.proxy, true)
            default: (.other, false)
            }
        var hint = code == .tls && !retryable ? " (is the server's CA in the configured CA file?)" : ""
        if let proxy {
            // curl's message names the host it could not reach: the proxy's, or the server's for
            // a host in no_proxy.
            hint += " [egress proxy \(proxy)" + (proxy.noProxy.isEmpty ? "" : ", not for \(proxy.noProxy.joined(separator: ","))") + "]"
        }
        return HTTP2ClientError(code: code, message: message + hint, curlCode: Int32(result.rawValue), isRetryable: retryable)
    }

    /// The proxy answered the tunnel's `CONNECT` with an error status (curl reports it as
    /// CURLE_RECV_ERROR, "CONNECT tunnel failed"). 403 (its rules refuse the destination) and
    /// 407 or 401 (credentials missing or refused) stay until its settings change; anything
    /// else, e.g. a 502 or 503 when it cannot reach the server, may pass later.
    private func tunnelRefusal(_ result: CURLcode, proxy: HTTPProxy) -> HTTP2ClientError? {
        guard let status = easy?.info(CURLINFO_HTTP_CONNECTCODE), status >= 300 else { return nil }
        let destination = request.url.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? request.url
        let why =
            switch status {
            // 407 asks for credentials; tinyproxy answers 401 to wrong ones.
            case 401, 407: ": it wants credentials (user:password in the proxy URL), or refused the ones given"
            case 403: ": its rules do not allow this destination"
            default: ""
            }
        return HTTP2ClientError(
            code: .proxy, message: "the egress proxy \(proxy) refused the tunnel to \(destination): CONNECT answered \(status)\(why)",
            curlCode: Int32(result.rawValue), isRetryable: ![401, 403, 407].contains(status))
    }
}

/// A finished transfer's response as the multi thread hands it over: the headers still as bytes.
struct CurlResponse: Sendable {
    var status: Int
    var headerBytes: [UInt8]
    var body: [UInt8]
    var httpVersion: String
    var answerTime: Duration?

    /// The response, its header lines parsed only when its headers are read, by the caller
    /// (never on the multi thread).
    var response: HTTPResponse {
        HTTPResponse(status: status, headerLines: headerBytes, body: body, httpVersion: httpVersion, answerTime: answerTime)
    }
}

let writeCallback: ccurl_data_callback = { data, size, count, userdata in
    let bytes = size * count
    guard let data, let userdata else { return bytes }
    Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        .appendBody(UnsafeRawBufferPointer(start: data, count: bytes))
    return bytes
}

/// Notes the local port of the connection a transfer is about to use.
let prereqCallback: ccurl_prereq_callback = { clientp, _, _, _, localPort in
    if let clientp { Unmanaged<CurlTransfer>.fromOpaque(clientp).takeUnretainedValue().localPort = Int(localPort) }
    return CURL_PREREQFUNC_OK
}

let headerCallback: ccurl_data_callback = { data, size, count, userdata in
    let bytes = size * count
    guard let data, let userdata else { return bytes }
    Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        .appendHeaderLine(UnsafeRawBufferPointer(start: data, count: bytes))
    return bytes
}
