import LocusCore
import LocusNumerics

extension TrilaterationConfiguration {
    /// The mode these settings solve in for a whole set of locators (e.g. a floor's): the
    /// configured mode, or for `.automatic` the kernel's rule — planar when n < 4 or the height
    /// spread max zᵢ − min zᵢ ≤ `planarHeightSpreadRatio` × the diagonal of the horizontal bounding box.
    package func resolvedMode(for locators: [Point3]) -> TrilaterationMode {
        if mode != .automatic { return mode }
        let model = TrilaterationKernel.chooseModel(locators: locators.span, requested: nil,
                                                    planarHeightSpreadRatio: planarHeightSpreadRatio)
        return model == .spatial ? .spatial : .planar
    }
}
