import Foundation
import LocusCore

/// Reference positions per tag (`truth.csv`, SPEC §2: `t,tag,x,y,z`, `tag` and `z` optional),
/// interpolated linearly in time to compare with positions.
public struct GroundTruth: Sendable {
    /// One tag's samples, sorted by time (stable for equal times).
    struct Track: Sendable {
        var timeSeconds: [Double] = []
        var points: [Point3] = []

        /// No samples.
        init() {}

        /// Samples at `timeSeconds` (sorted), `points`.
        init(timeSeconds: [Double], points: [Point3]) {
            self.timeSeconds = timeSeconds
            self.points = points
        }

        /// The truth at `t` by linear interpolation between the neighbouring samples; nil outside
        /// [first, last] sample time. O(log n).
        func position(at t: Double) -> Point3? {
            guard let first = timeSeconds.first, let last = timeSeconds.last, t >= first, t <= last else { return nil }
            var lo = 0, hi = timeSeconds.count - 1
            while hi - lo > 1 {
                let mid = (lo + hi) / 2
                if timeSeconds[mid] <= t { lo = mid } else { hi = mid }
            }
            let t0 = timeSeconds[lo], t1 = timeSeconds[hi]
            let p0 = points[lo], p1 = points[hi]
            guard t1 > t0 else { return p0 }
            let f = (t - t0) / (t1 - t0)
            return Point3(x: p0.x + f * (p1.x - p0.x), y: p0.y + f * (p1.y - p0.y), z: p0.z + f * (p1.z - p0.z))
        }
    }

    /// Tracks by tag id.
    var tracks: [TagID: Track] = [:]
    /// Rows skipped while reading.
    public internal(set) var skipped = SkipTally()

    init() {}

    /// The truth of `tag` at `t`, or nil when the tag has none there.
    public func position(tag: TagID, at t: Double) -> Point3? { tracks[tag]?.position(at: t) }

    /// The samples of `tag` (times in seconds, sorted; positions in metres), nil when it has none:
    /// for a fit over the whole track (the truth clock shift).
    public func samples(of tag: TagID) -> (timeSeconds: [Double], points: [Point3])? {
        tracks[tag].map { ($0.timeSeconds, $0.points) }
    }

    /// Reads `truth.csv`.
    /// - Throws: `E5001` unreadable, `E5003` when `t`, `x` or `y` is missing from the header.
    public static func read(path: String) throws(LocusError) -> GroundTruth {
        let data = try FileBytes.read(path: path)
        let result = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<GroundTruth, LocusError> in
            Result { () throws(LocusError) -> GroundTruth in try parse(raw.bindMemory(to: UInt8.self), file: path) }
        }
        return try result.get()
    }

    /// Parses truth bytes; `file` names the source in errors.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, file: String) throws(LocusError) -> GroundTruth {
        let table = try PointTable.parse(bytes, file: file, kind: "truth")
        var truth = GroundTruth()
        truth.skipped = table.skipped
        for i in 0..<table.count {
            let tag = table.tags[Int(table.tagIndex[i])]
            truth.tracks[tag, default: Track()].timeSeconds.append(table.timeSeconds[i])
            truth.tracks[tag, default: Track()].points.append(table.points[i])
        }
        for (tag, track) in truth.tracks {
            var sorted = true
            for i in 1..<max(1, track.timeSeconds.count) where track.timeSeconds[i] < track.timeSeconds[i - 1] { sorted = false; break }
            if sorted { continue }
            let order = track.timeSeconds.indices.sorted { a, b in
                track.timeSeconds[a] < track.timeSeconds[b] || (track.timeSeconds[a] == track.timeSeconds[b] && a < b)
            }
            truth.tracks[tag] = Track(timeSeconds: order.map { track.timeSeconds[$0] }, points: order.map { track.points[$0] })
        }
        return truth
    }
}
