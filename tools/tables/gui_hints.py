#!/usr/bin/env python3
"""Times the GUI's move values from loaded tables: `dodgem gui` with a
table directory, hints on, nobody's moves made by the engine; a "person"
plays random legal moves (seeded) and, after each, the time until every
move of the new position has its value (`view.hints.done`, polled every
2 ms over the HTTP API) is recorded.

usage: gui_hints.py DODGEM TABLE_DIR SIZE RULES MOVES SEED
Prints the median, 90th percentile and longest wait in milliseconds.
"""
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gui_client import Gui  # noqa: E402  (gui_client.py: `dodgem gui` over HTTP)

exe, tables, size, rules, count, seed = sys.argv[1:7]
gui = Gui(exe, tables, timeout=60)
call = gui.call


def wait(predicate, limit=60.0):
    return gui.wait(predicate, limit, poll=0.002)


def hints_done(state):
    hints = state["view"].get("hints") or {}
    return hints.get("done") and hints.get("source") == "table"


rng = random.Random(int(seed))
wait(lambda s: s.get("engine", {}).get("status") == "ready", 120)
call("/api/new", {"size": int(size), "rules": rules, "engine": "none"})
call("/api/config", {"hints": True})
waits = []
while len(waits) < int(count):
    state = wait(lambda s: s["engine"]["status"] == "ready")
    if not state["legal_moves"] or state.get("result"):
        call("/api/new", {"size": int(size), "rules": rules, "engine": "none"})
        continue
    started = time.perf_counter()
    call("/api/move", {"move": rng.choice(state["legal_moves"])})
    state = wait(lambda s: hints_done(s) or s.get("result"))
    if not state.get("result"):
        waits.append((time.perf_counter() - started) * 1000)
gui.close()
waits.sort()
print(f"{len(waits)} positions: median {statistics.median(waits):.1f} ms, "
      f"90th {waits[int(0.9 * len(waits))]:.1f} ms, longest {waits[-1]:.1f} ms")
