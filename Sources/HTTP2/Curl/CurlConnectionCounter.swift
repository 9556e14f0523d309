import CCurl
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Counts the connections one multi handle's transfers open and close, through libcurl's
/// `CURLOPT_OPENSOCKETFUNCTION` and `CURLOPT_CLOSESOCKETFUNCTION`: libcurl opens a connection
/// when a host's connections have no free stream left, and closes one a server ends or that
/// sat idle past `CURLOPT_MAXAGE_CONN`. What the client reports as its connections.
///
/// Handed to libcurl unretained: its ``CurlMultiLoop`` keeps it until the multi handle is
/// cleaned up, after which libcurl opens and closes nothing.
final class CurlConnectionCounter: Sendable {
    /// Connections open now.
    let open = Atomic<Int>(0)
    /// Connections opened so far.
    let opened = Atomic<Int>(0)

    /// Sets the socket callbacks on `easy`, with this counter as their data.
    func install(on easy: CurlEasyHandle) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        easy.withPointer { handle in
            _ = ccurl_easy_setopt_opensocket_callback(handle, openSocketCallback)
            _ = ccurl_easy_setopt_ptr(handle, CURLOPT_OPENSOCKETDATA, me)
            _ = ccurl_easy_setopt_closesocket_callback(handle, closeSocketCallback)
            _ = ccurl_easy_setopt_ptr(handle, CURLOPT_CLOSESOCKETDATA, me)
        }
    }
}

/// Makes the socket libcurl asks for, as libcurl would, and counts it.
let openSocketCallback: ccurl_opensocket_callback = { clientp, _, address in
    guard let address else { return -1 }
    let fd = socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
    if fd >= 0, let clientp {
        let counter = Unmanaged<CurlConnectionCounter>.fromOpaque(clientp).takeUnretainedValue()
        counter.open.add(1, ordering: .relaxed)
        counter.opened.add(1, ordering: .relaxed)
    }
    return fd
}

/// Closes a socket libcurl is done with, and counts it.
let closeSocketCallback: ccurl_closesocket_callback = { clientp, fd in
    if let clientp { Unmanaged<CurlConnectionCounter>.fromOpaque(clientp).takeUnretainedValue().open.subtract(1, ordering: .relaxed) }
    return close(fd)
}
