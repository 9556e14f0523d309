import Testing

@testable import HTTP2

#if canImport(Glibc)
    import Glibc
#endif

/// libcurl's `CURL_POLL_*` values (curl/multi.h: NONE, IN, OUT, INOUT, REMOVE; the tests do not import CCurl, which only
/// `Sources/HTTP2/Curl/` may).
private let curlPollNone: Int32 = 0
private let curlPollIn: Int32 = 1
private let curlPollOut: Int32 = 2
private let curlPollInOut: Int32 = 3
private let curlPollRemove: Int32 = 4

/// The poll set kept from libcurl's socket callback (no I/O).
@Suite("CurlSocketInterest: the sockets libcurl waits on, as a poll set")
struct CurlSocketInterestTests {
    let wakeup = pollfd(fd: 99, events: Int16(POLLIN), revents: 0)

    func sorted(_ set: [pollfd]) -> [[Int]] {
        set.dropFirst().map { [Int($0.fd), Int($0.events)] }.sorted { $0[0] < $1[0] }
    }

    @Test("what libcurl asks for becomes poll events; a removed socket leaves the set; the wakeup descriptor comes first")
    func followsCallbacks() {
        let interest = CurlSocketInterest()
        interest.update(socket: 7, what: curlPollIn)
        interest.update(socket: 8, what: curlPollInOut)
        var set = interest.pollSet(after: wakeup)
        #expect(set.first?.fd == 99)
        #expect(sorted(set) == [[7, Int(POLLIN)], [8, Int(POLLIN | POLLOUT)]])

        interest.update(socket: 7, what: curlPollOut)
        interest.update(socket: 8, what: curlPollRemove)
        set = interest.pollSet(after: wakeup)
        #expect(sorted(set) == [[7, Int(POLLOUT)]], "a cached set is rebuilt after a change")

        interest.update(socket: 7, what: curlPollNone)
        #expect(interest.pollSet(after: wakeup).count == 1)
        interest.update(socket: 9, what: curlPollIn)
        interest.removeAll()
        #expect(interest.pollSet(after: wakeup).count == 1, "the multi handle was replaced: its sockets are gone")
    }
}
