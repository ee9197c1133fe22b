/// Word wrapping for text drawn without a layout engine (SVG): lines by a character budget.
enum TextWrapping {
    /// `text` in lines of at most `width` characters, broken at spaces; a word longer than a line is
    /// cut at the budget. Continuation lines start with `indent` (counted in the budget). Joining the
    /// lines with single spaces, after dropping the indents, gives back `text` with its runs of spaces
    /// collapsed (and cut words split by one space). Complexity O(characters).
    /// - Precondition: `width` > `indent.count`.
    static func lines(_ text: String, width: Int, indent: String = "") -> [String] {
        precondition(width > indent.count, "TextWrapping.lines: width \(width) leaves no room after the indent")
        var out: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            var word = Substring(word)
            while true {
                let prefix = out.isEmpty && line.isEmpty ? "" : (line.isEmpty ? indent : line + " ")
                if prefix.count + word.count <= width {
                    line = prefix + word
                    break
                }
                if !line.isEmpty {
                    out.append(line)
                    line = ""
                    continue
                }
                // A word longer than a whole line: cut it.
                let room = width - prefix.count
                out.append(prefix + word.prefix(room))
                word = word.dropFirst(room)
            }
        }
        if !line.isEmpty || out.isEmpty { out.append(line) }
        return out
    }
}
