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
/// It keeps the TCP sockets it makes until they close (``tcpSocketsNow``); with `corkable`, it
/// corks them while ``setCorking(_:)`` says so, and ``flushWrites()`` sends what they hold
/// (``WriteFlushSchedule``).
///
/// Handed to libcurl unretained: its ``CurlMultiLoop`` keeps it until the multi handle is
/// cleaned up, after which libcurl opens and closes nothing.
final class CurlConnectionCounter: Sendable {
    /// Connections open now.
    let open = Atomic<Int>(0)
    /// Connections opened so far.
    let opened = Atomic<Int>(0)
    /// TCP sockets may be corked.
    let corkable: Bool
    /// ``flushWrites()`` calls so far (for tests).
    let flushes = Atomic<Int>(0)
    /// The TCP sockets open now, and whether they are corked. libcurl opens and closes sockets
    /// only inside the `curl_multi_*` calls of the multi thread, which also corks and flushes,
    /// so the lock is contended only by tests.
    private let tcpSockets = Mutex<(open: Set<Int32>, corked: Bool)>(([], false))

    init(corkable: Bool = false) {
        self.corkable = corkable
    }

    /// The corked sockets open now (for tests).
    var corkedNow: [Int32] { tcpSockets.withLock { $0.corked ? Array($0.open) : [] } }

    /// The TCP sockets open now, idle connections' included.
    var tcpSocketsNow: Set<Int32> { tcpSockets.withLock { $0.open } }

    /// Corks every TCP socket, and those made later, or uncorks them all (which sends what they
    /// hold).
    func setCorking(_ on: Bool) {
        guard corkable else { return }
        tcpSockets.withLock { sockets in
            sockets.corked = on
            for fd in sockets.open { Self.setCork(fd, on) }
        }
    }

    /// Sends what every corked socket holds, and corks it again.
    func flushWrites() {
        flushes.add(1, ordering: .relaxed)
        tcpSockets.withLock { sockets in
            guard sockets.corked else { return }
            for fd in sockets.open {
                Self.setCork(fd, false)  // sends what is held
                Self.setCork(fd, true)
            }
        }
    }

    /// libcurl made socket `fd` (`tcp`: a TCP one, kept if ``corkable``).
    func made(_ fd: Int32, tcp: Bool) {
        open.add(1, ordering: .relaxed)
        opened.add(1, ordering: .relaxed)
        guard tcp else { return }
        tcpSockets.withLock { sockets in
            sockets.open.insert(fd)
            if corkable, sockets.corked { Self.setCork(fd, true) }
        }
    }

    /// libcurl is about to close socket `fd`.
    func closing(_ fd: Int32) {
        open.subtract(1, ordering: .relaxed)
        tcpSockets.withLock { _ = $0.open.remove(fd) }
    }

    /// A failure leaves the socket as it was: uncorked, it sends each write at once.
    private static func setCork(_ fd: Int32, _ on: Bool) {
        var value: Int32 = on ? 1 : 0
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }

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
        let tcp = address.pointee.socktype == Int32(SOCK_STREAM.rawValue) && address.pointee.family != AF_UNIX
        Unmanaged<CurlConnectionCounter>.fromOpaque(clientp).takeUnretainedValue().made(fd, tcp: tcp)
    }
    return fd
}

/// Closes a socket libcurl is done with, and counts it.
let closeSocketCallback: ccurl_closesocket_callback = { clientp, fd in
    if let clientp { Unmanaged<CurlConnectionCounter>.fromOpaque(clientp).takeUnretainedValue().closing(fd) }
    return close(fd)
}
