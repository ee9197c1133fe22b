import LocusCore
import Synchronization

// The entry points of a `PositioningProvider` (through `ProviderOutput`), each checked against the
// run it was started for.
extension FloorSession {
    func acceptsProvider(_ generation: Int) -> Bool {
        state.withLock { $0.isRunning && $0.generation == generation }
    }

    func providerIngest(_ measurements: [Measurement], lines: [Int]?, generation: Int) {
        state.withLock { s in
            guard s.isRunning, s.generation == generation else { return }
            for (k, m) in measurements.enumerated() { accept(m, line: lines?[k] ?? 0, &s) }
            collect(&s)
        }
        dispatch()
    }

    func providerEnteredBuilding(_ buildingID: String) {
        state.withLock { s in
            guard s.isRunning, buildingID == site.building.id, s.floorIndex == nil else { return }
            s.floorIndex = FloorIndex(0)
            s.driver.setDefaultFloor(FloorIndex(0))
            s.queue.append(.log(LogMessage(.info, nil, .floorSwitched(floor: site.floors[0].id.rawValue, building: buildingID))))
            describeFloor(FloorIndex(0), into: &s)
        }
        dispatch()
    }

    func providerPosition(_ fix: PositionFix) {
        state.withLock { s in
            guard s.isRunning else { return }
            s.driver.ingest(fix: fix)
            // A ready position is final: move the clock just past it so that it is released now.
            s.driver.advance(toSeconds: fix.timeSeconds.nextUp)
            collect(&s)
        }
        dispatch()
    }

    func providerZoneEvent(_ event: ZoneEvent) {
        state.withLock { s in
            guard s.isRunning else { return }
            s.eventsSinceBegin += 1
            s.queue.append(.event(event))
        }
        dispatch()
    }
}
