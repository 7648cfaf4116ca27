#!/usr/bin/env python3
"""Plays games of an engine against itself from loaded tables and reports
the engine's memory: its anonymous resident memory (RssAnon: what it
holds of its own, not pages of mapped files the system can drop) at the
end and its peak resident memory (VmHWM).

Each game starts with --random-plies random moves (seeded), then the
engine plays both sides with `go wtime .. btime .. winc .. binc ..` at
the clock given (seconds + increment), until the game ends or --max-plies.

Usage: tools/tables/play_memory.py BIN SIZE RULES DIR [--games 4]
       [--clock 1+0.01] [--random-plies 6] [--seed 1] [--max-plies 300]
"""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from latency import Engine  # noqa: E402  (tools/latency.py: the engine over pipes)


def status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("size", type=int)
    parser.add_argument("rules")
    parser.add_argument("dir")
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--clock", default="1+0.01")
    parser.add_argument("--random-plies", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-plies", type=int, default=300)
    args = parser.parse_args()
    base, increment = (float(x) for x in args.clock.split("+"))
    rng = random.Random(args.seed)
    engine = Engine(args.binary)
    send, until = engine.send, engine.lines_until

    send(f"setoption name BoardSize value {args.size}")
    send(f"setoption name Rules value {args.rules}")
    send(f"setoption name TablebasePath value {args.dir}")
    send("isready")
    errors = [l for l in until("readyok", timeout=600) if "error" in l]
    if errors:
        raise SystemExit(errors[0])
    started = time.time()
    plies_played = 0
    for _ in range(args.games):
        moves = []
        clocks = [base * 1000, base * 1000]
        for ply in range(args.max_plies):
            send("position startpos moves " + " ".join(moves))
            send("d")
            lines = until("Status:")
            if "to move" not in lines[-1]:
                break
            legal = next(l for l in lines if l.startswith("Legal moves:")).split(":")[1].split()
            if ply < args.random_plies:
                move = rng.choice(legal)
            else:
                side = ply % 2
                t = time.time()
                send(f"go wtime {int(clocks[1])} btime {int(clocks[0])} "
                     f"winc {int(increment * 1000)} binc {int(increment * 1000)}")
                move = until("bestmove")[-1].split()[1]
                clocks[side] += increment * 1000 - (time.time() - t) * 1000
            moves.append(move)
            plies_played += 1
    fields = status(engine.proc.pid)
    print(f"{args.games} games, {plies_played} plies in {time.time() - started:.1f} s; "
          f"RssAnon {fields.get('RssAnon')}, RssFile {fields.get('RssFile')}, "
          f"VmHWM {fields.get('VmHWM')}")
    engine.quit()


if __name__ == "__main__":
    main()
