import LocusSolvers

extension GeometryVerdict {
    /// `#RRGGBB` of the title: dark green, amber, red.
    var colour: String {
        switch self {
        case .good: return "#1A6B3A"
        case .fair: return "#8A5A00"
        case .poor: return "#B2182B"
        }
    }
}
