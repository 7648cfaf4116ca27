#!/usr/bin/env python3
"""Plays 6 x 6 games against `dodgem gui` over its HTTP API: a "person"
making random moves (seeded) as Black, the engine (with the 6 x 6 tables)
as White. Prints each game's result and the engine's first and last scores.

usage: gui_game.py DODGEM TABLE_DIR GAMES SEED [MOVETIME_MS]
"""
import json, random, subprocess, sys, time, urllib.request, re

exe, tables, games, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
gui = subprocess.Popen([exe, "gui", "--port", "0", "--option", f"TablebasePath={tables}"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
line = gui.stdout.readline()
port = re.search(r"127\.0\.0\.1:(\d+)", line).group(1)
base = f"http://127.0.0.1:{port}"
def call(path, body=None):
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="GET" if body is None else "POST")
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)
def wait(pred, limit=900):
    t = time.time()
    while True:
        s = call("/api/state")
        if pred(s): return s
        if time.time() - t > limit: raise SystemExit(f"timeout: {json.dumps(s)[:2000]}")
        time.sleep(0.2)
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
gui.terminate()
