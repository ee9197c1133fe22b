/// A short, allocation-free list of locator addresses (at most `capacity`; further ones are only
/// counted in `overflowCount`). Used for the locators a fix rejected, so that producing a fix never
/// allocates.
public struct LocatorList: Sendable, Hashable, Sequence {
    /// How many addresses are kept inline.
    public static let capacity = 8
    private var storage: (UInt16, UInt16, UInt16, UInt16, UInt16, UInt16, UInt16, UInt16) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Number of addresses kept (≤ `capacity`).
    public private(set) var count: Int = 0
    /// Addresses appended beyond `capacity`.
    public private(set) var overflowCount: Int = 0

    public init() {}

    public init(_ addresses: some Sequence<LocatorAddress>) {
        for a in addresses { append(a) }
    }

    public static func == (a: LocatorList, b: LocatorList) -> Bool {
        a.overflowCount == b.overflowCount && Array(a) == Array(b)
    }

    public func hash(into hasher: inout Hasher) {
        for a in self { hasher.combine(a) }
        hasher.combine(overflowCount)
    }

    /// Total appended, kept or not.
    public var totalCount: Int { count + overflowCount }
    public var isEmpty: Bool { totalCount == 0 }

    public mutating func append(_ address: LocatorAddress) {
        guard count < Self.capacity else { overflowCount += 1; return }
        withUnsafeMutableBytes(of: &storage) { raw in
            raw.storeBytes(of: address.rawValue, toByteOffset: count * 2, as: UInt16.self)
        }
        count += 1
    }

    public subscript(index: Int) -> LocatorAddress {
        precondition(index >= 0 && index < count, "LocatorList index out of range")
        return withUnsafeBytes(of: storage) { raw in
            LocatorAddress(raw.load(fromByteOffset: index * 2, as: UInt16.self))
        }
    }

    public func makeIterator() -> AnyIterator<LocatorAddress> {
        var i = 0
        let copy = self
        return AnyIterator {
            guard i < copy.count else { return nil }
            defer { i += 1 }
            return copy[i]
        }
    }
}
