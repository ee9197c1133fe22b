import LocusNumerics

/// How the trilateration models the tag's height.
public enum TrilaterationMode: Sendable, Hashable {
    /// Planar when the locators are near-coplanar in height, spatial otherwise (see
    /// `TrilaterationConfiguration.planarHeightSpreadRatio`).
    case automatic
    /// Known tag height h; unknowns (x, y): r̂ᵢ = √((x−xᵢ)² + (y−yᵢ)² + (h−zᵢ)²). Needs 3 ranges.
    case planar
    /// Unknowns (x, y, z): r̂ᵢ = ‖p − pᵢ‖. Needs 4 ranges and locators not all in one plane.
    case spatial

    /// Number of unknowns p (2 planar, 3 spatial); nil for `.automatic`.
    var unknowns: Int? {
        switch self {
        case .automatic: return nil
        case .planar: return 2
        case .spatial: return 3
        }
    }
}

extension TrilaterationSolution {
    /// The mode solved in (never `.automatic`).
    public var mode: TrilaterationMode { TrilaterationMode(model) }
}
