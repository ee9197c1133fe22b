@testable import LocusLive
import Testing

@Suite("HTTP request head parser")
struct HTTPRequestHeadTests {
    private func parse(_ text: String) throws(HTTPRequestHead.Refusal) -> HTTPRequestHead {
        let bytes = Array(text.utf8)
        return try HTTPRequestHead(parsing: bytes[...])
    }

    private func refusal(_ text: String) -> HTTPRequestHead.Refusal? {
        do throws(HTTPRequestHead.Refusal) {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test("a good GET: method, target, path without the query, version, Host, Last-Event-ID")
    func good() throws {
        let head = try parse("GET /api/site?x=1&y=2 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: */*\r\nlast-event-id:  42 \r\nContent-Length: 0\r\n\r\n")
        #expect(head.method == .get)
        #expect(head.target == "/api/site?x=1&y=2")
        #expect(head.path == "/api/site")
        #expect(head.minorVersion == 1)
        #expect(head.host == "127.0.0.1:8080")
        #expect(head.lastEventID == "42")
        let head10 = try parse("HEAD / HTTP/1.0\r\n\r\n")
        #expect(head10.method == .head)
        #expect(head10.host == nil)
        #expect(head10.path == "/")
    }

    @Test("the head's end is found across appends, and not before it arrives")
    func headLength() {
        let text = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\nextra".utf8)
        #expect(HTTPRequestHead.headLength(in: Array(text[0..<20])) == nil)
        #expect(HTTPRequestHead.headLength(in: text) == text.count - 5)
        #expect(HTTPRequestHead.headLength(in: text, searchFrom: 26) == text.count - 5)
        #expect(HTTPRequestHead.headLength(in: []) == nil)
    }

    @Test("methods other than GET and HEAD are 405; a malformed method is 400")
    func methods() {
        #expect(refusal("POST / HTTP/1.1\r\nHost: a\r\n\r\n") == .methodNotAllowed)
        #expect(refusal("DELETE /x HTTP/1.1\r\nHost: a\r\n\r\n") == .methodNotAllowed)
        #expect(refusal("get / HTTP/1.1\r\nHost: a\r\n\r\n") == .methodNotAllowed)
        #expect(refusal("G(T / HTTP/1.1\r\nHost: a\r\n\r\n") == .badRequest)
        #expect(refusal(" GET / HTTP/1.1\r\nHost: a\r\n\r\n") == .badRequest)
    }

    @Test("targets: origin form only, at most 1 KiB (414), no spaces or control bytes")
    func targets() {
        #expect(refusal("GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n") == .badRequest)
        #expect(refusal("GET * HTTP/1.1\r\nHost: a\r\n\r\n") == .badRequest)
        #expect(refusal("GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n") == .badRequest)
        #expect(refusal("GET /a b HTTP/1.1\r\nHost: a\r\n\r\n") == .badRequest)
        #expect(refusal("GET  / HTTP/1.1\r\nHost: a\r\n\r\n") == .badRequest)
        #expect(refusal("GET /\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n") == .badRequest)
        let long = "/" + String(repeating: "a", count: 1024)
        #expect(refusal("GET \(long) HTTP/1.1\r\nHost: a\r\n\r\n") == .uriTooLong)
        #expect(refusal("GET \(long.dropLast()) HTTP/1.1\r\nHost: a\r\n\r\n") == nil)
    }

    @Test("versions and line ends: HTTP/1.x with CRLF only")
    func versions() {
        #expect(refusal("GET / HTTP/2.0\r\nHost: a\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1 \r\nHost: a\r\n\r\n") == .badRequest)
        #expect(refusal("GET / http/1.1\r\nHost: a\r\n\r\n") == .badRequest)
        #expect(refusal("GET /\r\nHost: a\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\nHost: a\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\n") == .badRequest)
        #expect(refusal("\r\n\r\n") == .badRequest)
    }

    @Test("headers: no folding, no space before the colon, no control bytes, one Host")
    func headers() {
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\r\nHost : a\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\n: empty\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{01}b\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == .badRequest)
    }

    @Test("a body is refused: Content-Length above 0 or not a number, any Transfer-Encoding")
    func body() {
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -0\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n") == nil)
    }

    @Test("a missing Host is 400 under HTTP/1.1 and fine under HTTP/1.0")
    func missingHost() {
        #expect(refusal("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n") == .badRequest)
        #expect(refusal("GET / HTTP/1.0\r\nAccept: */*\r\n\r\n") == nil)
    }

    @Test("loopback Host names pass, any other (DNS rebinding) does not")
    func loopbackHosts() {
        for good in ["127.0.0.1", "127.0.0.1:8080", "localhost", "LocalHost:1", "[::1]", "[::1]:65535", "127.0.0.2:9"] {
            #expect(HTTPRequestHead.isLoopbackHost(good, boundHost: "127.0.0.2"), "\(good)")
        }
        for bad in ["evil.example", "evil.example:8080", "127.0.0.1.evil.example", "localhost.", "localhost:", "localhost:123456",
                    "localhost:80x", "[::1]x", "[::2]", "[::1", "", "127.0.0.1:8080:1", "0.0.0.0"] {
            #expect(!HTTPRequestHead.isLoopbackHost(bad, boundHost: "127.0.0.1"), "\(bad)")
        }
    }
}
