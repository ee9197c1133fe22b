import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An SVG read back with XMLParser for structural checks: every element in document order with its
/// attributes, the ids of the `<g>` groups around it, and its text.
final class SVGModel: NSObject, XMLParserDelegate, @unchecked Sendable {
    struct Element {
        var name: String
        var attributes: [String: String]
        /// Ids of the enclosing `<g id=…>` elements, outermost first.
        var groups: [String]
        var text: String

        /// A numeric attribute (nil when absent or not a number).
        func number(_ key: String) -> Double? { attributes[key].flatMap(Double.init) }
        /// A numeric attribute in hundredths, exactly as written with two decimals.
        func hundredths(_ key: String) -> Int? { number(key).map { Int(($0 * 100).rounded()) } }
        func inGroup(_ id: String) -> Bool { groups.contains(id) }
    }

    private(set) var elements: [Element] = []
    private var stack: [(index: Int, group: String?)] = []
    private(set) var error: Error?

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        let groups = stack.compactMap(\.group)
        elements.append(Element(name: name, attributes: attributes, groups: groups, text: ""))
        stack.append((elements.count - 1, name == "g" ? (attributes["id"] ?? "") : nil))
    }
    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let top = stack.last { elements[top.index].text += string }
    }
    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        _ = stack.popLast()
    }
    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) { error = parseError }

    /// The model of `bytes`, or nil when they are not well-formed XML.
    static func parse(_ bytes: [UInt8]) -> SVGModel? {
        let model = SVGModel()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = model
        return parser.parse() && model.error == nil ? model : nil
    }

    /// Elements named `name`, optionally only those inside the group `group`.
    func all(_ name: String, in group: String? = nil) -> [Element] {
        elements.filter { e in e.name == name && (group.map { e.inGroup($0) } ?? true) }
    }

    /// The floor outline: the unfilled rectangle with the dark stroke.
    var mapOutline: Element? {
        elements.first { $0.name == "rect" && $0.attributes["fill"] == "none" && $0.attributes["stroke"] == "#222222" }
    }

    /// Canvas width and height, px.
    var size: (width: Double, height: Double) {
        let root = elements.first { $0.name == "svg" }
        return (root?.number("width") ?? 0, root?.number("height") ?? 0)
    }
}

/// Approximate text boxes for overlap checks: width = characters × 0.55 em (0.6 em bold), from
/// 0.7 em above the baseline to 0.2 em below — a little smaller than DejaVu Sans's real extent and
/// than the estimate the label placer works with, so a reported overlap is a real one.
struct TextBox: CustomStringConvertible {
    var text: String
    var minX: Double, minY: Double, maxX: Double, maxY: Double

    init?(_ e: SVGModel.Element) {
        guard e.name == "text", let x = e.number("x"), let y = e.number("y"), let size = e.number("font-size") else { return nil }
        let w = Double(e.text.count) * size * (e.attributes["font-weight"] == "bold" ? 0.6 : 0.55)
        switch e.attributes["text-anchor"] {
        case "end": minX = x - w
        case "middle": minX = x - w / 2
        default: minX = x
        }
        maxX = minX + w
        minY = y - 0.7 * size
        maxY = y + 0.2 * size
        text = e.text
    }

    func overlaps(_ o: TextBox) -> Bool { minX < o.maxX && o.minX < maxX && minY < o.maxY && o.minY < maxY }
    func overlaps(circleAt cx: Double, _ cy: Double, radius r: Double) -> Bool {
        let nx = min(max(cx, minX), maxX), ny = min(max(cy, minY), maxY)
        return (nx - cx) * (nx - cx) + (ny - cy) * (ny - cy) < r * r
    }
    var description: String { "'\(text)' [\(Int(minX))…\(Int(maxX)) × \(Int(minY))…\(Int(maxY))]" }
}
