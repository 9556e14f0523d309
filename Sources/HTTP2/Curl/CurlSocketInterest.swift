import CCurl

#if canImport(Glibc)
    import Glibc
#endif

/// The sockets libcurl's transfers wait on and what for, as libcurl reports them through
/// `CURLMOPT_SOCKETFUNCTION`, kept as a `poll(2)` set: ``CurlMultiLoop`` waits on these and tells
/// libcurl which socket is ready (`curl_multi_socket_action`), so libcurl visits only the
/// transfers of that connection. `curl_multi_perform` visits every transfer and polls each
/// one's socket; with thousands of streams in flight that was the client's largest cost
/// (docs/benchmarks.md).
///
/// Multi thread only: libcurl calls back from inside the `curl_multi_*` calls made there.
/// Handed to libcurl unretained; its ``CurlMultiHandle`` keeps it past `curl_multi_cleanup`.
final class CurlSocketInterest {
    /// `poll(2)` events wanted, per socket.
    private(set) var events: [Int32: Int16] = [:]
    /// The set as `pollfd`s, rebuilt when it changes; the caller's extra descriptors first.
    private var cached: [pollfd]?

    /// Installs the socket callback on `multi`, with this object as its data.
    func install(on multi: UnsafeMutableRawPointer) {
        _ = ccurl_multi_setopt_socket_callback(multi, socketCallback)
        _ = ccurl_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, Unmanaged.passUnretained(self).toOpaque())
    }

    /// What libcurl said about `socket` (`CURL_POLL_IN`, `_OUT`, `_INOUT` or `_REMOVE`).
    func update(socket: Int32, what: Int32) {
        let wanted = Self.pollEvents(forCurl: what)
        if wanted == 0 {
            guard events.removeValue(forKey: socket) != nil else { return }
        } else {
            guard events.updateValue(wanted, forKey: socket) != wanted else { return }
        }
        cached = nil
    }

    /// Forgets every socket (the multi handle they belonged to is gone).
    func removeAll() {
        events.removeAll()
        cached = nil
    }

    /// `extra` followed by libcurl's sockets, ready for `poll(2)`.
    func pollSet(after extra: pollfd) -> [pollfd] {
        if let cached, cached.first?.fd == extra.fd { return cached }
        var set = [extra]
        set.reserveCapacity(events.count + 1)
        for (fd, wanted) in events { set.append(pollfd(fd: fd, events: wanted, revents: 0)) }
        cached = set
        return set
    }

    /// `poll(2)` events for libcurl's `CURL_POLL_*`; 0 for `CURL_POLL_REMOVE` or none.
    static func pollEvents(forCurl what: Int32) -> Int16 {
        switch what {
        case CURL_POLL_IN: Int16(POLLIN)
        case CURL_POLL_OUT: Int16(POLLOUT)
        case CURL_POLL_INOUT: Int16(POLLIN | POLLOUT)
        default: 0
        }
    }
}

/// `CURLMOPT_SOCKETFUNCTION`: libcurl says which socket to watch for what.
private func socketCallback(
    _ easy: UnsafeMutableRawPointer?, _ socket: curl_socket_t, _ what: Int32, _ userp: UnsafeMutableRawPointer?, _ socketp: UnsafeMutableRawPointer?
) -> Int32 {
    guard let userp else { return 0 }
    Unmanaged<CurlSocketInterest>.fromOpaque(userp).takeUnretainedValue().update(socket: socket, what: what)
    return 0
}
