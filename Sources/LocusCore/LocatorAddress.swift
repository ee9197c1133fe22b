/// A locator's (UWB anchor's) 16-bit short address.
public struct LocatorAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }
    public static func < (a: LocatorAddress, b: LocatorAddress) -> Bool { a.rawValue < b.rawValue }

    /// Upper-case hex with `0x` prefix and four digits, e.g. `0x9DD7`.
    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// Parses `"0x9DD7"` (case-insensitive hex) or `"40407"` (decimal). Nil when not a 16-bit value.
    public init?(parsing text: some StringProtocol) {
        let s = text.trimmingASCIIWhitespace()
        let lower = s.lowercased()
        if lower.hasPrefix("0x") {
            guard let v = UInt16(lower.dropFirst(2), radix: 16) else { return nil }
            self.rawValue = v
        } else {
            guard let v = UInt16(s, radix: 10) else { return nil }
            self.rawValue = v
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing ASCII spaces and tabs.
    package func trimmingASCIIWhitespace() -> Substring {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" || c == "\r" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\r" { s.removeLast() }
        return s
    }
}
