import LocusCore

/// One log message of a session: its level, its code (SPEC §6; nil for lifecycle tracing) and what
/// happened, rendered in English, Korean or Japanese by `text(in:)`.
struct LogMessage: Sendable, Hashable {
    /// How much it matters.
    var level: LogLevel
    /// The stable code (`E3001`, `E4002`, …), nil for lifecycle messages.
    var code: LocusErrorCode?
    /// What happened (the catalogue entry with its values).
    var subject: Subject

    /// The catalogue of session messages. Values are data (ids, counts), never translated.
    enum Subject: Sendable, Hashable {
        case began(floor: String?)
        case ended(positions: Int, events: Int)
        case floorSwitched(floor: String, building: String)
        case noFloorMap(dropped: Int)
        case unknownFloor(floor: String)
        case floorHasNoZones(floor: String)
        case floorWithoutSessionID(floor: String)
        case notRunning(dropped: Int)
        case epochsFailed(count: Int)
        case deliveryFailed(sequence: UInt64, positions: Int, reason: String)
        case spoolFailed(path: String, reason: String)
        case undelivered(positions: Int, spooled: Bool)
        case recovered(batches: Int, positions: Int)
        case discarded(positions: Int)
    }

    /// A message of the catalogue.
    init(_ level: LogLevel, _ code: LocusErrorCode?, _ subject: Subject) {
        self.level = level
        self.code = code
        self.subject = subject
    }

    /// The message in `language`, prefixed with its code: `[E3001] no floor map set: …`.
    func text(in language: LogLanguage) -> String {
        let body: String
        switch language {
        case .english: body = english
        case .korean: body = korean
        case .japanese: body = japanese
        }
        guard let code else { return body }
        return "[\(code.rawValue)] \(body)"
    }

    private var epochReasonEnglish: String {
        switch code {
        case .tooFewRanges: "too few usable locators"
        case .degenerateGeometry: "degenerate locator geometry"
        case .solverDiverged: "the solver did not converge"
        case .filterDivergence: "the filter diverged and was re-initialised"
        default: "no solution"
        }
    }
    private var epochReasonKorean: String {
        switch code {
        case .tooFewRanges: "사용 가능한 로케이터가 너무 적습니다"
        case .degenerateGeometry: "로케이터 배치가 퇴화되었습니다"
        case .solverDiverged: "해가 수렴하지 않았습니다"
        case .filterDivergence: "필터가 발산하여 다시 초기화했습니다"
        default: "해가 없습니다"
        }
    }
    private var epochReasonJapanese: String {
        switch code {
        case .tooFewRanges: "使用できるロケーターが少なすぎます"
        case .degenerateGeometry: "ロケーター配置が縮退しています"
        case .solverDiverged: "解が収束しませんでした"
        case .filterDivergence: "フィルターが発散したため再初期化しました"
        default: "解がありません"
        }
    }

    private var english: String {
        switch subject {
        case .began(let floor): floor.map { "session began on floor \($0)" } ?? "session began without a floor map"
        case .ended(let p, let e): "session ended: \(plural(p, "position")), \(plural(e, "zone event"))"
        case .floorSwitched(let f, let b): "floor map set to \(f) of building \(b)"
        case .noFloorMap(let n): "no floor map set: dropped \(plural(n, "range")) without a floor; call setFloorMap first"
        case .unknownFloor(let f): "the site has no floor '\(f)'"
        case .floorHasNoZones(let f): "floor \(f) has no zones yet: positions only, no zone events"
        case .floorWithoutSessionID(let f): "floor \(f) has no UWB session id: positioning anyway"
        case .notRunning(let n): "the session is not running: dropped \(plural(n, "range")); call begin() first"
        case .epochsFailed(let n): "\(plural(n, "epoch")) gave no position: \(epochReasonEnglish)"
        case .deliveryFailed(let s, let n, let r): "the sink did not take batch \(s) (\(plural(n, "position"))): \(r); it stays pending"
        case .spoolFailed(let p, let r): "could not write the spool \(p): \(r)"
        case .undelivered(let n, let spooled):
            spooled ? "not yet delivered at exit: \(plural(n, "position")), kept in the spool for the next start"
                : "never delivered: \(plural(n, "position")), the session ended without end() or send()"
        case .recovered(let b, let n): "delivered \(plural(b, "pending batch", "pending batches")) (\(plural(n, "position"))) from the spool first"
        case .discarded(let n): "discarded \(plural(n, "buffered position"))"
        }
    }

    private var korean: String {
        switch subject {
        case .began(let floor): floor.map { "세션을 시작했습니다 (층 \($0))" } ?? "층 지도 없이 세션을 시작했습니다"
        case .ended(let p, let e): "세션을 종료했습니다: 위치 \(p)건, 구역 이벤트 \(e)건"
        case .floorSwitched(let f, let b): "층 지도를 건물 \(b)의 \(f) 층으로 설정했습니다"
        case .noFloorMap(let n): "층 지도가 설정되지 않았습니다: 층이 없는 거리 측정 \(n)건을 버렸습니다. 먼저 setFloorMap을 호출하세요"
        case .unknownFloor(let f): "사이트에 '\(f)' 층이 없습니다"
        case .floorHasNoZones(let f): "\(f) 층에 아직 구역이 없습니다: 위치만 제공하고 구역 이벤트는 없습니다"
        case .floorWithoutSessionID(let f): "\(f) 층에 UWB 세션 ID가 없습니다: 그래도 측위합니다"
        case .notRunning(let n): "세션이 실행 중이 아닙니다: 거리 측정 \(n)건을 버렸습니다. 먼저 begin()을 호출하세요"
        case .epochsFailed(let n): "에포크 \(n)건에서 위치를 얻지 못했습니다: \(epochReasonKorean)"
        case .deliveryFailed(let s, let n, let r): "싱크가 배치 \(s) (위치 \(n)건)를 받지 않았습니다: \(r). 보류 상태로 남습니다"
        case .spoolFailed(let p, let r): "스풀 \(p)에 쓸 수 없습니다: \(r)"
        case .undelivered(let n, let spooled):
            spooled ? "종료 시 전달되지 않은 위치 \(n)건: 다음 시작 때를 위해 스풀에 남습니다"
                : "위치 \(n)건이 전달되지 않았습니다: end()나 send() 없이 세션이 끝났습니다"
        case .recovered(let b, let n): "스풀에 보류된 배치 \(b)건 (위치 \(n)건)을 먼저 전달했습니다"
        case .discarded(let n): "버퍼의 위치 \(n)건을 버렸습니다"
        }
    }

    private var japanese: String {
        switch subject {
        case .began(let floor): floor.map { "セッションを開始しました (フロア \($0))" } ?? "フロアマップなしでセッションを開始しました"
        case .ended(let p, let e): "セッションを終了しました: 位置 \(p) 件、ゾーンイベント \(e) 件"
        case .floorSwitched(let f, let b): "フロアマップを建物 \(b) のフロア \(f) に設定しました"
        case .noFloorMap(let n): "フロアマップが設定されていません: フロアのない測距 \(n) 件を破棄しました。先に setFloorMap を呼んでください"
        case .unknownFloor(let f): "サイトにフロア '\(f)' がありません"
        case .floorHasNoZones(let f): "フロア \(f) にはまだゾーンがありません: 位置のみでゾーンイベントはありません"
        case .floorWithoutSessionID(let f): "フロア \(f) に UWB セッション ID がありません: そのまま測位します"
        case .notRunning(let n): "セッションが実行されていません: 測距 \(n) 件を破棄しました。先に begin() を呼んでください"
        case .epochsFailed(let n): "\(n) 個のエポックで位置が得られませんでした: \(epochReasonJapanese)"
        case .deliveryFailed(let s, let n, let r): "シンクがバッチ \(s) (位置 \(n) 件) を受け取りませんでした: \(r)。保留のままです"
        case .spoolFailed(let p, let r): "スプール \(p) に書き込めません: \(r)"
        case .undelivered(let n, let spooled):
            spooled ? "終了時に未配信の位置 \(n) 件: 次回の開始のためスプールに残ります"
                : "位置 \(n) 件が配信されませんでした: end() も send() もなくセッションが終わりました"
        case .recovered(let b, let n): "スプールの保留バッチ \(b) 件 (位置 \(n) 件) を先に配信しました"
        case .discarded(let n): "バッファの位置 \(n) 件を破棄しました"
        }
    }
}
