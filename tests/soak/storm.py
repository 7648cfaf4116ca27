#!/usr/bin/env python3
"""Protocol storm for the soak run (tests/soak/run.sh).

Usage: storm.py <dodgem binary> <seconds> <seed> <table file>

Drives one dodgem process for the given time with random go / stop /
isready / position / setoption / table-job lines, never waiting for an
answer; then checks that every go got exactly one bestmove or one refusal,
every isready its readyok, and stdout held only UTF-8 lines without control
characters, log lines or panic text; reports the engine's memory (RSS) at
the start, each minute, at the end, and settled (Hash back to 16 MB, files
unloaded, tables emptied), and its exit status."""
import random, subprocess, sys, threading, time

binary, seconds, seed, table = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = random.Random(seed)
LINES = [
    "go depth 4", "go depth 12", "go movetime 5", "go nodes 3000", "go infinite",
    "go wtime 30 btime 30", "go ponder", "ponderhit", "stop", "stop", "stop", "isready", "isready",
    "position startpos", "position startpos moves a3b3", "position fen 2B1/B3/4/WWW1 w",
    "setoption name MultiPV value 2", "setoption name MultiPV value 1",
    "setoption name BoardSize value 4", "setoption name BoardSize value 3",
    "setoption name BoardSize value 5", "setoption name BoardSize value 6", "d", "eval", "solve",
    "setoption name Hash value 1024", "setoption name Hash value 16", "setoption name Clear Hash",
    "ucinewgame", "setoption name Rules value classic", "setoption name Rules value textbook",
    f"setoption name TablebasePath value {table}", "setoption name TablebasePath value <empty>",
    "go perft 4", "bench 2", "go depth 99999", "go mate 1000", "nonsense \x1b[31m here",
]
FIRST = {"id", "uciok", "readyok", "bestmove", "info", "option", "Fen:", "Key:", "Nodes",
         "Legal", "Status:", "solve", "eval", "Checkers:", "Side"}

def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, bufsize=0)
out = []
def reader():
    for raw in proc.stdout:
        out.append(raw)
t = threading.Thread(target=reader, daemon=True); t.start()
proc.stdin.write(b"uci\nisready\n"); time.sleep(0.5)
isreadys_start = 1
rss_before = rss_kb(proc.pid)
gos = sent = 0
isreadys = isreadys_start
end = time.time() + seconds
samples = []
next_sample = time.time() + 60
while time.time() < end:
    if time.time() >= next_sample:
        samples.append(rss_kb(proc.pid))
        next_sample += 60
    line = rng.choice(LINES)
    proc.stdin.write((line + "\n").encode())
    sent += 1
    gos += line.startswith("go") and not line.startswith("go perft")
    isreadys += line == "isready"
    if rng.random() < 0.25:
        time.sleep(rng.random() * 0.003)
proc.stdin.write(b"stop\n")
time.sleep(0.5)
rss_after = rss_kb(proc.pid)
proc.stdin.write(b"stop\nisready\n"); isreadys += 1
deadline = time.time() + 30
def count(pred):
    return sum(1 for l in list(out) if pred(l))
while time.time() < deadline:
    if count(lambda l: l.strip() == b"readyok") >= isreadys:
        break
    time.sleep(0.1)
# Settle: the default hash, no files, tables emptied; what memory is left
# then is the baseline plus what the process keeps for good (the built-in
# tables, the 16 MB table once touched), not what the storm leaked.
proc.stdin.write(b"stop\nsetoption name Hash value 16\nsetoption name TablebasePath value <empty>\n"
                 b"ucinewgame\nisready\n")
isreadys += 1
deadline = time.time() + 30
while time.time() < deadline and count(lambda l: l.strip() == b"readyok") < isreadys:
    time.sleep(0.1)
time.sleep(1)
rss_settled = rss_kb(proc.pid)
proc.stdin.write(b"quit\n")
code = proc.wait(timeout=30)
t.join(timeout=5)
lines = list(out)
readyoks = count(lambda l: l.strip() == b"readyok")
bestmoves = count(lambda l: l.startswith(b"bestmove"))
refused = count(lambda l: l.startswith(b"info string error: go")
                and not l.startswith(b"info string error: go perft"))
bad = []
for raw in lines:
    try:
        text = raw.decode("utf-8").rstrip("\n")
    except UnicodeDecodeError:
        bad.append(raw); continue
    if any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in text):
        bad.append(raw); continue
    # No log line, panic message or backtrace on stdout.
    if any(word in text for word in ("panicked", "RUST_BACKTRACE", " DEBUG ", " INFO ", " WARN ",
                                      " ERROR ", "stack backtrace")):
        bad.append(raw)
print(f"storm seed {seed}: {seconds:.0f} s, {sent} lines sent, {gos} go (+ ponder/infinite), "
      f"{bestmoves} bestmove + {refused} refused go (sum {bestmoves + refused}), "
      f"{isreadys} isready / {readyoks} readyok, {len(lines)} stdout lines, {len(bad)} not protocol, "
      f"RSS {rss_before} kB at the start, each minute {samples}, {rss_after} kB at the end, "
      f"{rss_settled} kB settled (Hash 16, tables emptied), exit {code}")
if bad:
    print("first bad lines:", bad[:5])
ok = bestmoves + refused == gos and readyoks == isreadys and not bad and code == 0
print("OK" if ok else "FAULT")
