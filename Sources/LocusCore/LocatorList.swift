/// A short, allocation-free list of locator addresses (at most `capacity`; further ones are only
/// counted in `overflowCount`). Used for the locators a fix rejected, so that producing a fix never
/// allocates. (`@usableFromInline`: the empty list is made inline, once per fix, in other modules.)
@usableFromInline package struct LocatorList: Sendable, Hashable, Sequence {
    /// How many addresses are kept inline.
    package static let capacity = 8
    @usableFromInline var storage: (UInt16, UInt16, UInt16, UInt16, UInt16, UInt16, UInt16, UInt16)
    /// Number of addresses kept (≤ `capacity`).
    @usableFromInline package private(set) var count: Int
    /// Addresses appended beyond `capacity`.
    @usableFromInline package private(set) var overflowCount: Int

    /// The empty list.
    @inlinable package init() {
        storage = (0, 0, 0, 0, 0, 0, 0, 0)
        count = 0
        overflowCount = 0
    }

    /// The list of `addresses`, in order (beyond `capacity` only counted). O(n).
    package init(_ addresses: some Sequence<LocatorAddress>) {
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
    package var isEmpty: Bool { totalCount == 0 }

    /// Keeps `address` when fewer than `capacity` are kept, otherwise counts it in `overflowCount`.
    package mutating func append(_ address: LocatorAddress) {
        guard count < Self.capacity else { overflowCount += 1; return }
        withUnsafeMutableBytes(of: &storage) { raw in
            raw.storeBytes(of: address.rawValue, toByteOffset: count * 2, as: UInt16.self)
        }
        count += 1
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
