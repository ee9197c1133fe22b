/// A short, allocation-free list of locator addresses (at most `capacity`; further ones are only
/// counted in `overflowCount`). Used for the locators a fix rejected, so that producing a fix never
/// allocates. (`@usableFromInline`: the empty list is made inline, once per fix, in other modules.)
@usableFromInline package struct LocatorList: Sendable, Hashable, Sequence {
    /// How many addresses are kept inline.
    static let capacity = 8
    @usableFromInline var storage: (UInt16, UInt16, UInt16, UInt16, UInt16, UInt16, UInt16, UInt16)
    /// `count` and `overflowCount`, narrow (24 bytes a list, not 32: every fix carries one, and so
    /// does every tracked tag's open epoch).
    @usableFromInline var keptCount: UInt16
    @usableFromInline var overflow: UInt32
    /// Number of addresses kept (≤ `capacity`).
    @inlinable package var count: Int { Int(keptCount) }
    /// Addresses appended beyond `capacity` (saturating at 2³² − 1).
    @inlinable var overflowCount: Int { Int(overflow) }

    /// The empty list.
    @inlinable package init() {
        storage = (0, 0, 0, 0, 0, 0, 0, 0)
        keptCount = 0
        overflow = 0
    }

    /// The list of `addresses`, in order (beyond `capacity` only counted). O(n).
    init(_ addresses: some Sequence<LocatorAddress>) {
        self.init()
        for a in addresses { append(a) }
    }

    /// Equal when the kept addresses and the overflow count are.
    @usableFromInline package static func == (a: LocatorList, b: LocatorList) -> Bool {
        a.overflowCount == b.overflowCount && Array(a) == Array(b)
    }

    /// Hashes the kept addresses and the overflow count (consistent with `==`).
    @usableFromInline package func hash(into hasher: inout Hasher) {
        for a in self { hasher.combine(a) }
        hasher.combine(overflowCount)
    }

    /// Total appended, kept or not.
    package var totalCount: Int { count + overflowCount }
    /// True when nothing was appended.
    var isEmpty: Bool { totalCount == 0 }

    /// Keeps `address` when fewer than `capacity` are kept, otherwise counts it in `overflowCount`.
    package mutating func append(_ address: LocatorAddress) {
        guard count < Self.capacity else { overflow = overflow == .max ? overflow : overflow + 1; return }
        let k = count
        withUnsafeMutableBytes(of: &storage) { raw in
            raw.storeBytes(of: address.rawValue, toByteOffset: k * 2, as: UInt16.self)
        }
        keptCount += 1
    }

    /// The kept address at `index` (0 ≤ index < `count`; a precondition).
    package subscript(index: Int) -> LocatorAddress {
        precondition(index >= 0 && index < count, "LocatorList index out of range")
        return withUnsafeBytes(of: storage) { raw in
            LocatorAddress(raw.load(fromByteOffset: index * 2, as: UInt16.self))
        }
    }

    /// The kept addresses in order (the iterator allocates: not for a per-fix path).
    @usableFromInline package func makeIterator() -> AnyIterator<LocatorAddress> {
        var i = 0
        let copy = self
        return AnyIterator {
            guard i < copy.count else { return nil }
            defer { i += 1 }
            return copy[i]
        }
    }
}
