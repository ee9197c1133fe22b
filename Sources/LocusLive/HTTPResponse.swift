/// The bytes `HTTPServer` answers with: a status line, the headers every response carries, and a
/// fixed body. Error bodies are fixed plain text and never echo anything of the request.
enum HTTPResponse {
    /// The headers on every response: nothing is cached, no type sniffing, no referrer leaves the
    /// page, and the page may load only its own script, style and feed (no inline code, no frames).
    static let commonHeaders = "Cache-Control: no-store\r\n"
        + "X-Content-Type-Options: nosniff\r\n"
        + "Referrer-Policy: no-referrer\r\n"
        + "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        + "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n"

    /// The reason phrase of the statuses the server sends.
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 414: "URI Too Long"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }

    /// A complete response with `Content-Length` and `Connection: close`; the body only when
    /// `includeBody` (a HEAD gets the GET's length without it).
    static func complete(status: Int, contentType: String, body: [UInt8], includeBody: Bool,
                         extraHeaders: String = "") -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(reason(status))\r\n"
        text += "Content-Type: \(contentType)\r\n"
        text += "Content-Length: \(body.count)\r\n"
        text += extraHeaders
        text += commonHeaders
        text += "Connection: close\r\n\r\n"
        var bytes = Array(text.utf8)
        if includeBody { bytes.append(contentsOf: body) }
        return bytes
    }

    /// An error response: `status`, a one-line plain-text body naming it (`404 Not Found\n`).
    /// 405 carries `Allow: GET, HEAD`; 503 `Retry-After: 5`.
    static func error(_ status: Int, includeBody: Bool = true) -> [UInt8] {
        var extra = ""
        if status == 405 { extra = "Allow: GET, HEAD\r\n" }
        if status == 503 { extra = "Retry-After: 5\r\n" }
        return complete(status: status, contentType: "text/plain; charset=utf-8",
                        body: Array("\(status) \(reason(status))\n".utf8), includeBody: includeBody, extraHeaders: extra)
    }

    /// The head of the event stream: no length (the body ends when the connection does), then —
    /// unless it answers a HEAD — the reconnection delay the browser's `EventSource` should use.
    static func eventStream(includeBody: Bool) -> [UInt8] {
        var text = "HTTP/1.1 200 OK\r\n"
        text += "Content-Type: text/event-stream\r\n"
        text += commonHeaders
        text += "Connection: close\r\n\r\n"
        if includeBody { text += "retry: 2000\n\n" }
        return Array(text.utf8)
    }
}
