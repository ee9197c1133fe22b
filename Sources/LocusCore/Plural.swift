/// A count with its noun in English, singular for exactly 1 and plural otherwise, for messages:
/// `plural(1, "zone")` is "1 zone", `plural(0, "zone")` "0 zones", `plural(2, "fix", "fixes")`
/// "2 fixes". The one place messages choose between the two forms.
/// - Parameters:
///   - count: how many.
///   - noun: the singular form, e.g. `"locator"` or `"range row"`.
///   - pluralNoun: the plural form when it is not `noun` + "s" (e.g. `"batches"`, `"vertices"`).
package func plural(_ count: Int, _ noun: String, _ pluralNoun: String? = nil) -> String {
    "\(count) " + (count == 1 ? noun : pluralNoun ?? noun + "s")
}
