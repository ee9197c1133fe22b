import CZlib
import Foundation

/// An SVG rendered to PNG by rsvg-convert (Debian librsvg2-bin, installed by scripts/setup) and
/// decoded to RGBA: enough to tell a blank drawing from a real one and to find white seams in a map.
/// Decodes 8-bit non-interlaced RGB or RGBA PNGs (what rsvg-convert writes), zlib through CZlib.
struct RenderedPNG {
    var width: Int
    var height: Int
    /// RGBA, row by row.
    var pixels: [UInt8]

    static let rsvgConvert = "/usr/bin/rsvg-convert"

    /// Whether rsvg-convert is installed (tests skip the rendering with a message otherwise).
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: rsvgConvert) }

    /// Renders `svgPath` to `svgPath`.png and decodes it; nil when rsvg-convert failed or the PNG
    /// could not be decoded.
    static func render(svgPath: String) -> RenderedPNG? {
        let pngPath = svgPath + ".png"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: rsvgConvert)
        process.arguments = [svgPath, "-o", pngPath]
        do { try process.run() } catch { return nil }
        process.waitUntilExit()
        guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: pngPath) else { return nil }
        return decode([UInt8](data))
    }

    /// Decodes a PNG's bytes; nil for anything but 8-bit non-interlaced RGB or RGBA.
    static func decode(_ bytes: [UInt8]) -> RenderedPNG? {
        guard bytes.count > 8, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
        func u32(_ i: Int) -> Int { Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) }
        var position = 8, width = 0, height = 0, channels = 0
        var compressed: [UInt8] = []
        while position + 8 <= bytes.count {
            let length = u32(position)
            let type = String(decoding: bytes[(position + 4)..<(position + 8)], as: UTF8.self)
            let body = position + 8
            guard body + length <= bytes.count else { return nil }
            if type == "IHDR" {
                width = u32(body)
                height = u32(body + 4)
                guard bytes[body + 8] == 8, bytes[body + 12] == 0 else { return nil }
                switch bytes[body + 9] {
                case 2: channels = 3
                case 6: channels = 4
                default: return nil
                }
            } else if type == "IDAT" {
                compressed.append(contentsOf: bytes[body..<(body + length)])
            }
            position = body + length + 4
        }
        guard width > 0, height > 0, channels > 0 else { return nil }
        let stride = width * channels
        var raw = [UInt8](repeating: 0, count: height * (stride + 1))
        var rawLength = uLongf(raw.count)
        let status = raw.withUnsafeMutableBufferPointer { out in
            compressed.withUnsafeBufferPointer { input in
                uncompress(out.baseAddress, &rawLength, input.baseAddress, uLong(input.count))
            }
        }
        guard status == Z_OK, Int(rawLength) == raw.count else { return nil }
        // Undo the per-row filters (None, Sub, Up, Average, Paeth).
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        var previous = [UInt8](repeating: 0, count: stride), line = [UInt8](repeating: 0, count: stride)
        for y in 0..<height {
            let start = y * (stride + 1), filter = raw[start]
            for i in 0..<stride {
                let a = i >= channels ? Int(line[i - channels]) : 0, b = Int(previous[i]), c = i >= channels ? Int(previous[i - channels]) : 0
                let predictor: Int
                switch filter {
                case 1: predictor = a
                case 2: predictor = b
                case 3: predictor = (a + b) / 2
                case 4:
                    let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    predictor = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                default: predictor = 0
                }
                line[i] = UInt8((Int(raw[start + 1 + i]) + predictor) & 0xFF)
            }
            for x in 0..<width {
                for k in 0..<channels { rgba[(y * width + x) * 4 + k] = line[x * channels + k] }
            }
            swap(&previous, &line)
        }
        return RenderedPNG(width: width, height: height, pixels: rgba)
    }

    /// Whether the pixel at (x, y) is (nearly) white, or transparent (the canvas behind is white).
    func isWhite(_ x: Int, _ y: Int) -> Bool {
        let i = (y * width + x) * 4
        return pixels[i + 3] < 8 || (pixels[i] >= 250 && pixels[i + 1] >= 250 && pixels[i + 2] >= 250)
    }

    /// Fraction of pixels that are not white.
    var inkFraction: Double {
        var ink = 0
        for y in 0..<height { for x in 0..<width where !isWhite(x, y) { ink += 1 } }
        return Double(ink) / Double(max(1, width * height))
    }

    /// Distinct opaque colours (up to 1,000), a measure of a drawing being more than a flat fill.
    var colourCount: Int {
        var seen = Set<UInt32>()
        for i in stride(from: 0, to: pixels.count, by: 4) where pixels[i + 3] == 255 {
            seen.insert(UInt32(pixels[i]) << 16 | UInt32(pixels[i + 1]) << 8 | UInt32(pixels[i + 2]))
            if seen.count >= 1000 { break }
        }
        return seen.count
    }

    /// Rows and columns inside the box (px, 2 px in from its edges) more than 30 % white: a seam
    /// between heat cells (labels and their halos are far smaller).
    func whiteSeams(x: Double, y: Double, width w: Double, height h: Double) -> [String] {
        let x0 = max(0, Int(x) + 2), x1 = min(width, Int(x + w) - 2), y0 = max(0, Int(y) + 2), y1 = min(height, Int(y + h) - 2)
        guard x1 > x0, y1 > y0 else { return [] }
        var seams: [String] = []
        for yy in y0..<y1 {
            let white = (x0..<x1).filter { isWhite($0, yy) }.count
            if Double(white) > 0.3 * Double(x1 - x0) { seams.append("row \(yy): \(white) white") }
        }
        for xx in x0..<x1 {
            let white = (y0..<y1).filter { isWhite(xx, $0) }.count
            if Double(white) > 0.3 * Double(y1 - y0) { seams.append("column \(xx): \(white) white") }
        }
        return seams
    }
}
