import LocusCore

extension TruthClockAlignment {
    /// Why δ̂ fell back to 0, in words, or nil when it was estimated: "no usable range row (known floor
    /// and locator, tag with truth over ±0.50 s around the row's time)" or "the range residuals hardly
    /// depend on the shift (relative improvement 0.000120 < 0.001000; does the tag move?)", with the
    /// window and the threshold of `configuration` (the one `estimate` was given).
    func fallbackReason(configuration: TruthClockAlignmentConfiguration = .standard) -> String? {
        switch outcome {
        case .estimated:
            return nil
        case .noUsableRow:
            return "no usable range row (known floor and locator, tag with truth over ±"
                + "\(DecimalText.string(configuration.halfWidthSeconds, decimals: 2)) s around the row's time)"
        case .flatCost:
            return "the range residuals hardly depend on the shift (relative improvement "
                + "\(DecimalText.string(relativeImprovement, decimals: 6)) < "
                + "\(DecimalText.string(configuration.minimumRelativeImprovement, decimals: 6)); does the tag move?)"
        }
    }
}
