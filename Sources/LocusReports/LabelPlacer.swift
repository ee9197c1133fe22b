/// A rectangle in SVG user units (pixels, y down).
struct PixelBox: Equatable {
    var minX: Double
    var minY: Double
    var maxX: Double
    var maxY: Double

    /// The square of half-size `r` around (x, y) (a marker).
    static func around(x: Double, y: Double, radius r: Double) -> PixelBox {
        PixelBox(minX: x - r, minY: y - r, maxX: x + r, maxY: y + r)
    }

    /// Whether the two boxes share interior (touching edges do not count).
    func intersects(_ o: PixelBox) -> Bool { minX < o.maxX && o.minX < maxX && minY < o.maxY && o.minY < maxY }

    /// Area of the intersection, px².
    func overlap(_ o: PixelBox) -> Double {
        max(0, min(maxX, o.maxX) - max(minX, o.minX)) * max(0, min(maxY, o.maxY) - max(minY, o.minY))
    }

    /// Whether `o` lies wholly inside this box.
    func contains(_ o: PixelBox) -> Bool { o.minX >= minX && o.maxX <= maxX && o.minY >= minY && o.maxY <= maxY }

    /// Area, px².
    var area: Double { max(0, maxX - minX) * max(0, maxY - minY) }
}

/// Greedy placement of map labels without overlaps.
///
/// Labels are placed one at a time in the caller's order (most important first). Each tries candidate
/// positions around its anchor — beside a marker of the given clearance in the label's preferred
/// directions, then the same directions one and two rings further out (with a leader line back to the
/// anchor) — and takes the first whose box lies inside `bounds` and overlaps nothing placed or
/// reserved so far (markers, axis labels). When every candidate collides, the one with the least
/// overlap is taken. Text boxes are estimated, not measured: width = characters × 0.64 em (0.70 em
/// bold; DejaVu Sans digits are 0.636 em), ascent 0.78 em, descent 0.24 em, plus 1.5 px on each side
/// for the white halo — generous, so estimated boxes that do not overlap leave real text apart.
/// Deterministic: same input, same placement. Complexity O(labels² · candidates).
struct LabelPlacer {
    /// Where a direction puts the label relative to its anchor.
    enum Direction: CaseIterable {
        case northEast, northWest, southEast, southWest, east, west, north, south, centre

        /// (horizontal, vertical) sign: +1 right/down, −1 left/up, 0 centred.
        var signs: (Int, Int) {
            switch self {
            case .northEast: return (1, -1)
            case .northWest: return (-1, -1)
            case .southEast: return (1, 1)
            case .southWest: return (-1, 1)
            case .east: return (1, 0)
            case .west: return (-1, 0)
            case .north: return (0, -1)
            case .south: return (0, 1)
            case .centre: return (0, 0)
            }
        }
    }

    /// A placed label: the text's anchor point and `text-anchor`, its estimated box, and a leader
    /// line from the anchor when the label had to move out of the first ring.
    struct Placement {
        var x: Double
        var baseline: Double
        var textAnchor: String
        var box: PixelBox
        var leader: (x1: Double, y1: Double, x2: Double, y2: Double)?
        /// Whether no free spot was found (the label overlaps something).
        var collides: Bool
    }

    /// Width per character, em (regular and bold).
    static let emPerCharacter = 0.64, emPerBoldCharacter = 0.70
    /// Ascent and descent, em.
    static let ascent = 0.78, descent = 0.24
    /// Halo allowance on every side, px.
    static let padding = 1.5
    /// Extra distance per ring, px.
    static let ringStep = 13.0

    /// Where labels may go.
    var bounds: PixelBox
    /// Boxes already taken (reserved markers and text, and placed labels).
    private(set) var occupied: [PixelBox] = []

    init(bounds: PixelBox) { self.bounds = bounds }

    /// Marks `box` as taken (a marker or a fixed text) without drawing anything.
    mutating func reserve(_ box: PixelBox) { occupied.append(box) }

    /// Estimated width of `text` at `fontSize` px, without padding.
    static func textWidth(_ text: String, fontSize: Double, bold: Bool) -> Double {
        Double(text.count) * fontSize * (bold ? emPerBoldCharacter : emPerCharacter)
    }

    /// The estimated box of `text` drawn at (x, baseline) with `textAnchor` (start, middle, end), padding included.
    static func box(_ text: String, fontSize: Double, bold: Bool, x: Double, baseline: Double, textAnchor: String) -> PixelBox {
        let w = textWidth(text, fontSize: fontSize, bold: bold)
        let left: Double
        switch textAnchor {
        case "end": left = x - w
        case "middle": left = x - w / 2
        default: left = x
        }
        return PixelBox(minX: left - padding, minY: baseline - ascent * fontSize - padding,
                        maxX: left + w + padding, maxY: baseline + descent * fontSize + padding)
    }

    /// Places `text` near (x, y): `clearance` px is kept free around the anchor (a marker's radius and a
    /// gap; 0 for a bare point such as a zone's centre), directions are tried in `directions` order.
    /// - Precondition: `directions` is not empty.
    mutating func place(_ text: String, fontSize: Double, bold: Bool = false, x: Double, y: Double, clearance: Double,
                        directions: [Direction]) -> Placement {
        precondition(!directions.isEmpty, "LabelPlacer.place: no direction to try")
        let w = Self.textWidth(text, fontSize: fontSize, bold: bold) + 2 * Self.padding
        let h = (Self.ascent + Self.descent) * fontSize + 2 * Self.padding
        var best: (placement: Placement, cost: Double)? = nil
        for ring in 0..<3 {
            let r = clearance + Double(ring) * Self.ringStep
            for direction in directions {
                let (sx, sy) = direction.signs
                // Diagonals sit just above or below the anchor's line, beside the marker (the classic map label).
                let rx = r, ry = sx == 0 ? r : (ring == 0 ? 0.35 * clearance : r - 0.65 * clearance)
                let minX = sx > 0 ? x + rx : (sx < 0 ? x - rx - w : x - w / 2)
                let minY = sy > 0 ? y + ry : (sy < 0 ? y - ry - h : y - h / 2)
                let box = PixelBox(minX: minX, minY: minY, maxX: minX + w, maxY: minY + h)
                let textAnchor = sx > 0 ? "start" : (sx < 0 ? "end" : "middle")
                let tx = sx > 0 ? minX + Self.padding : (sx < 0 ? minX + w - Self.padding : x)
                let baseline = box.maxY - Self.padding - Self.descent * fontSize
                var leader: (x1: Double, y1: Double, x2: Double, y2: Double)? = nil
                if ring > 0 {
                    let lx = min(max(x, box.minX), box.maxX), ly = min(max(y, box.minY), box.maxY)
                    leader = (x, y, lx, ly)
                }
                var cost = occupied.reduce(0) { $0 + $1.overlap(box) }
                if !bounds.contains(box) { cost += box.area - bounds.overlap(box) + 1 }
                let placement = Placement(x: tx, baseline: baseline, textAnchor: textAnchor, box: box, leader: leader, collides: cost > 0)
                if cost == 0 {
                    occupied.append(box)
                    return placement
                }
                // Cost of a fallback: overlap, and a little for distance so nearer spots win ties.
                let penalised = cost + Double(ring)
                if let b = best, b.cost <= penalised { continue }
                best = (placement, penalised)
            }
        }
        guard let chosen = best?.placement else { preconditionFailure("LabelPlacer.place: no candidate") }
        occupied.append(chosen.box)
        return chosen
    }
}
