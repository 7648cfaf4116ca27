#!/usr/bin/env python3
"""Endgames against `dodgem gui` with endgame tables, over its HTTP API:
random positions with 3 cars a side that the engine (asked for its best
move) calls won from the tables; the engine then plays the winning side and
a "person" random moves for the other. It must win every game.

usage: gui_endgames.py DODGEM TABLE_DIR SIZE GAMES SEED
"""
import os, random, re, sys, urllib.error
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gui_client import Gui  # noqa: E402  (gui_client.py: `dodgem gui` over HTTP)
exe, tables, size, games, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rules = tables.rstrip('/').split('-')[-1]
gui = Gui(exe, tables)
call = gui.call
def wait(pred, limit=600):
    return gui.wait(pred, limit, poll=0.1)
rng = random.Random(seed)
def random_position():
    squares = rng.sample(range(size * size), 6)
    board = {sq: 'B' for sq in squares[:3]} | {sq: 'W' for sq in squares[3:]}
    ranks = []
    for rank in reversed(range(size)):
        row, empty = "", 0
        for f in range(size):
            c = board.get(rank * size + f)
            if c: row += (str(empty) if empty else "") + c; empty = 0
            else: empty += 1
        ranks.append(row + (str(empty) if empty else ""))
    return "/".join(ranks) + " " + rng.choice("bw")
wait(lambda s: s.get("engine", {}).get("status") == "ready", 120)
played = wins = 0
while played < games:
    pos = random_position()
    try: s = call("/api/position", {"position": pos, "rules": rules})
    except urllib.error.HTTPError:
        continue  # not a position the GUI takes (say, a finished game)
    if s["turn"] == "over": continue
    # Ask the engine for the best move to learn the value for the side to move.
    call("/api/config", {"engine": "none"})
    call("/api/best", {})
    def best_of(s):
        v = s.get("view") or s
        return v.get("best") or {}
    s = wait(lambda s: best_of(s).get("done"))
    text = best_of(s).get("text", "")
    m = re.search(r"(Black|White) wins \(solved tables\)", text)
    if not m: continue
    winner = m.group(1).lower()
    call("/api/position", {"position": pos, "rules": rules})
    call("/api/config", {"engine": winner, "movetime": 2000})
    while True:
        s = wait(lambda s: s["turn"] != "engine" and s["engine"]["status"] == "ready")
        if s["turn"] != "human": break
        call("/api/move", {"move": rng.choice(s["legal_moves"])})
    played += 1
    won = (s.get("result") or {}).get("winner") == winner
    wins += won
    print(f"{pos}: table says {winner} wins ({text}); {len(s['moves'])} plies; result {s.get('result', {}).get('text')}", flush=True)
print(f"{wins} of {played} won by the engine as the table predicted")
gui.close()
