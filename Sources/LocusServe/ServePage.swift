/// The page `locus serve` hands a browser: plain HTML, one script and one style sheet, compiled into
/// the binary (SwiftPM `embedInCode`: `Page/` is the source, nothing is fetched at run time and no
/// build step needs the network).
enum ServePage {
    /// One static file of the page: its path on the server, its media type and its bytes.
    struct Asset: Sendable {
        var path: String
        var contentType: String
        var body: [UInt8]
    }

    /// `/` (the HTML), `/app.js`, `/app.css`.
    static var assets: [Asset] {
        [Asset(path: "/", contentType: "text/html; charset=utf-8", body: PackageResources.index_html),
         Asset(path: "/app.js", contentType: "text/javascript; charset=utf-8", body: PackageResources.app_js),
         Asset(path: "/app.css", contentType: "text/css; charset=utf-8", body: PackageResources.app_css)]
    }
}
