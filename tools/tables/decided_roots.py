#!/usr/bin/env python3
"""What a GUI sees at decided 6 x 6 roots: random games of 24 plies from
the start (moves picked among the engine's MultiPV lines at depth 1,
searched without tables) until `solve` calls the position decided, then
`go movetime 5000` there, twice (cold, then cached). Prints the `solve`
answer, the last info line and `bestmove` for three such roots, and the
engine's peak RSS. Each game loads the tables afresh.

usage: decided_roots.py DODGEM TABLE_DIR SEED
"""
import random, subprocess, sys, time
binary, tables, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
eng = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, bufsize=1)
def send(c): eng.stdin.write(c + "\n"); eng.stdin.flush()
def until(p):
    out = []
    while True:
        l = eng.stdout.readline()
        if not l: raise SystemExit("engine gone: " + "\n".join(out))
        out.append(l.rstrip())
        if l.startswith(p): return out
def legal(moves):
    send("setoption name MultiPV value 21")
    send("position startpos moves " + " ".join(moves)); send("go depth 1")
    out = until("bestmove")
    send("setoption name MultiPV value 1")
    return sorted({l.split(" pv ")[1].split()[0] for l in out if " pv " in l})
send("uci"); until("uciok")
send("setoption name BoardSize value 6"); send("setoption name Tablebase value false")
send("isready"); until("readyok")
rng = random.Random(seed)
found = 0
while found < 3:
    moves = []
    for ply in range(24):
        choices = legal(moves)
        if not choices: break
        moves.append(rng.choice(choices))
    if len(moves) < 24: continue
    send("setoption name Tablebase value true")
    send("setoption name TablebasePath value " + tables); send("isready"); until("readyok")
    send("position startpos moves " + " ".join(moves)); t = time.time(); send("solve")
    ans = until("solve"); dt = time.time() - t
    if ans[-1].split()[1] in ("win", "loss"):
        print("position startpos moves", " ".join(moves), flush=True)
        for run in ("cold", "cached"):
            send("go movetime 5000"); t = time.time(); out = until("bestmove"); gt = time.time() - t
            info = [l for l in out if l.startswith("info") and " score " in l][-1]
            pv = info.split(" pv ")[1].split() if " pv " in info else []
            print(f"  {ans[-1]} ({dt:.1f} s); go movetime 5000 ({run}): {gt:.2f} s: {info.split(' pv ')[0]} | pv {len(pv)} plies | {out[-1]}", flush=True)
        found += 1
    send("setoption name TablebasePath value <empty>"); send("setoption name Tablebase value false")
    send("isready"); until("readyok")
rss = open(f"/proc/{eng.pid}/status").read().split("VmHWM:")[1].split("\n")[0].strip()
print("engine peak RSS", rss)
send("quit")
