import Testing

@testable import HTTP2

@Suite("HTTPResponse: header lines as libcurl delivers them, parsed only when read")
struct HTTPResponseTests {
    static let lines = Array("content-type: application/json\r\nRetry-After:\t 7 \r\nx-dup: a\r\nx-dup: b\r\nnot a header\r\n\r\n".utf8)

    @Test("the lines become fields in order, values trimmed, duplicates kept, lines without a colon left out")
    func parsedOnRead() {
        let response = HTTPResponse(status: 503, headerLines: Self.lines, body: [], httpVersion: "HTTP/2", answerTime: nil)
        #expect(response.headers.fields.map(\.name) == ["content-type", "Retry-After", "x-dup", "x-dup"])
        #expect(response.headers["retry-after"] == "7")
        #expect(response.headers.values(for: "X-Dup") == ["a", "b"])
        #expect(response.headers == HTTPResponse.parse(headerLines: Self.lines))
    }

    @Test("headers set on a response replace the lines it came with")
    func setReplaces() {
        var response = HTTPResponse(status: 200, headerLines: Self.lines, body: [], httpVersion: "HTTP/2", answerTime: nil)
        response.headers = ["retry-after": "30"]
        #expect(response.headers.fields.count == 1)
        #expect(response.headers["Retry-After"] == "30")
    }

    @Test("no lines, no fields")
    func empty() {
        #expect(HTTPResponse(status: 200, headerLines: [], body: [], httpVersion: "HTTP/2", answerTime: nil).headers.fields.isEmpty)
    }
}
