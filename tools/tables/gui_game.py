#!/usr/bin/env python3
"""Plays 6 x 6 games against `dodgem gui` over its HTTP API: a "person"
making random moves (seeded) as Black, the engine (with the 6 x 6 tables)
as White. Prints each game's result and the engine's first and last scores.

usage: gui_game.py DODGEM TABLE_DIR GAMES SEED [MOVETIME_MS]
"""
import json, os, random, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gui_client import Gui  # noqa: E402  (gui_client.py: `dodgem gui` over HTTP)

exe, tables, games, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
gui = Gui(exe, tables)
call = gui.call
def wait(pred, limit=900):
    return gui.wait(pred, limit, poll=0.2)
rng = random.Random(seed)
wait(lambda s: s.get("engine", {}).get("status") == "ready", 120)
for g in range(games):
    call("/api/new", {"size": 6, "rules": tables.rstrip('/').split('-')[-1], "engine": "white", "movetime": int(sys.argv[5]) if len(sys.argv) > 5 else 20000})
    scores = []
    while True:
        s = wait(lambda s: s["turn"] != "engine" and s["engine"]["status"] == "ready")
        a = s.get("analysis") or {}
        if a.get("score") is not None: scores.append(a.get("score"))
        if s["turn"] != "human": break
        call("/api/move", {"move": rng.choice(s["legal_moves"])})
    print(f"game {g+1}: {len(s['moves'])} plies, result {json.dumps(s.get('result'))}, engine scores {scores[:3]}...{scores[-3:]}", flush=True)
gui.close()
