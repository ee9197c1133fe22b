"""Session: a live engine — rows in as they come, positions and events out as they are released."""
import json

from .engine import Engine
from .result import event_lines, positions_array


class Session:
    """A live engine on `site` (a path or a Site) with `locus replay`'s options (see locus.replay).

    `ingest(rows)` pushes rows (NumPy structured array, DataFrame, dict of columns, or a list of
    (t, anchor, range_m[, tag[, floor]]) tuples; range differences with columns anchor_a, anchor_b,
    tdoa_m) in the order given — a tag's rows must come in
    non-decreasing time; unusable rows are skipped and counted (`skipped()`), not raised.
    `advance(t)` moves the clock (a timer tick), `finish()` ends the stream; `positions()` and
    `events()` return what was released since their last call. Usable as a context manager.
    """

    def __init__(self, site, **options):
        self._engine = Engine(site, **options)

    def ingest(self, rows):
        """Pushes rows in the order given."""
        self._engine.push(rows, sort=False)

    def advance(self, t):
        """Moves the clock to `t` (s): epochs no later row can join are solved, zones may exit."""
        self._engine.advance(t)

    def finish(self):
        """Ends the stream: every open epoch is solved and everything released."""
        self._engine.finish()

    def positions(self):
        """The positions released since the last call (structured array, as Result.positions)."""
        return positions_array(self._engine.poll_positions())

    def events(self):
        """The zone events released since the last call (dicts, as Result.events)."""
        return [json.loads(line) for line in event_lines(self._engine.poll_events())]

    def skipped(self):
        """Rows skipped so far, by reason."""
        return self._engine.skipped()

    def stats(self):
        """The engine's counters (struct locus_stats) as a dict."""
        return self._engine.stats()

    def close(self):
        """Destroys the engine (output not polled is lost)."""
        self._engine.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
