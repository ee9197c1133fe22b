import LocusCore

/// A minimal SVG 1.1 writer: elements appended in order, attributes in the order given, numbers
/// with fixed decimals, text XML-escaped — so the same drawing always gives the same bytes.
///
/// Coordinates are SVG user units (pixels, y down); a caller drawing in metres flips y itself.
/// Complexity O(output size); no Foundation.
struct SVGDocument: Sendable {
    /// An attribute value: a number (written with `decimals` digits) or text (escaped).
    enum Value: Sendable, Equatable {
        /// A number, written with the document's `decimals` (non-finite as 0).
        case number(Double)
        /// Text, XML-escaped.
        case text(String)
    }

    /// Width of the drawing, user units (pixels).
    let width: Double
    /// Height of the drawing, user units (pixels).
    let height: Double
    /// Digits after the point for numeric attributes (2: 1/100 px).
    var decimals: Int
    private var body: [UInt8] = []
    private var openElements: [String] = []

    /// An empty drawing of `width` × `height` user units.
    init(width: Double, height: Double, decimals: Int = 2) {
        self.width = width
        self.height = height
        self.decimals = decimals
    }

    /// Appends `<name a="v" …/>`, or `<name …>text</name>` when `text` is given.
    mutating func element(_ name: String, _ attributes: [(String, Value)], text: String? = nil) {
        indent()
        openTag(name, attributes)
        if let text {
            body.append(UInt8(ascii: ">"))
            Self.appendEscaped(text, to: &body)
            body.append(contentsOf: "</\(name)>\n".utf8)
        } else {
            body.append(contentsOf: "/>\n".utf8)
        }
    }

    /// Opens `<name …>`; close it with `close()`.
    mutating func open(_ name: String, _ attributes: [(String, Value)] = []) {
        indent()
        openTag(name, attributes)
        body.append(contentsOf: ">\n".utf8)
        openElements.append(name)
    }

    /// Closes the innermost element opened with `open`.
    /// - Precondition: an element is open.
    mutating func close() {
        guard let name = openElements.popLast() else { preconditionFailure("SVGDocument.close: nothing open") }
        indent()
        body.append(contentsOf: "</\(name)>\n".utf8)
    }

    /// `<rect x y width height …/>`.
    mutating func rect(x: Double, y: Double, width: Double, height: Double, _ style: [(String, Value)] = []) {
        element("rect", [("x", .number(x)), ("y", .number(y)), ("width", .number(width)), ("height", .number(height))] + style)
    }

    /// `<line x1 y1 x2 y2 …/>`.
    mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, _ style: [(String, Value)] = []) {
        element("line", [("x1", .number(x1)), ("y1", .number(y1)), ("x2", .number(x2)), ("y2", .number(y2))] + style)
    }

    /// `<circle cx cy r …/>`.
    mutating func circle(cx: Double, cy: Double, r: Double, _ style: [(String, Value)] = []) {
        element("circle", [("cx", .number(cx)), ("cy", .number(cy)), ("r", .number(r))] + style)
    }

    /// `<polygon points="x,y x,y …" …/>` (closed) or `<polyline …/>` when `closed` is false.
    mutating func polygon(_ points: [(x: Double, y: Double)], closed: Bool = true, _ style: [(String, Value)] = []) {
        var text: [UInt8] = []
        for (i, p) in points.enumerated() {
            if i > 0 { text.append(UInt8(ascii: " ")) }
            DecimalText.append(p.x, decimals: decimals, to: &text)
            text.append(UInt8(ascii: ","))
            DecimalText.append(p.y, decimals: decimals, to: &text)
        }
        element(closed ? "polygon" : "polyline", [("points", .text(String(decoding: text, as: UTF8.self)))] + style)
    }

    /// `<text x y …>content</text>`.
    mutating func text(_ content: String, x: Double, y: Double, _ style: [(String, Value)] = []) {
        element("text", [("x", .number(x)), ("y", .number(y))] + style, text: content)
    }

    /// The whole document: XML declaration, `<svg>` root with `viewBox`, the body, and any elements
    /// still open closed in order.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(body.count + 256)
        out.append(contentsOf: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n".utf8)
        out.append(contentsOf: "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"".utf8)
        DecimalText.append(width, decimals: 0, to: &out)
        out.append(contentsOf: "\" height=\"".utf8)
        DecimalText.append(height, decimals: 0, to: &out)
        out.append(contentsOf: "\" viewBox=\"0 0 ".utf8)
        DecimalText.append(width, decimals: 0, to: &out)
        out.append(UInt8(ascii: " "))
        DecimalText.append(height, decimals: 0, to: &out)
        out.append(contentsOf: "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n".utf8)
        out.append(contentsOf: body)
        for name in openElements.reversed() { out.append(contentsOf: "</\(name)>\n".utf8) }
        out.append(contentsOf: "</svg>\n".utf8)
        return out
    }

    private mutating func indent() {
        for _ in 0...openElements.count { body.append(contentsOf: "  ".utf8) }
    }

    private mutating func openTag(_ name: String, _ attributes: [(String, Value)]) {
        body.append(UInt8(ascii: "<"))
        body.append(contentsOf: name.utf8)
        for (key, value) in attributes {
            body.append(UInt8(ascii: " "))
            body.append(contentsOf: key.utf8)
            body.append(contentsOf: "=\"".utf8)
            switch value {
            case .number(let x): DecimalText.append(x.isFinite ? x : 0, decimals: decimals, to: &body)
            case .text(let s): Self.appendEscaped(s, to: &body)
            }
            body.append(UInt8(ascii: "\""))
        }
    }

    /// XML-escapes `&`, `<`, `>`, `"` and `'`; drops control characters XML 1.0 forbids.
    static func appendEscaped(_ text: String, to out: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): out.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): out.append(contentsOf: "&apos;".utf8)
            case 0x09, 0x0A, 0x0D: out.append(byte)
            case 0x00..<0x20: continue
            default: out.append(byte)
            }
        }
    }
}
