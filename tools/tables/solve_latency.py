#!/usr/bin/env python3
"""Times `solve` on random positions, each in a freshly started engine.

Random positions are made by random legal moves from the start (0 to
--max-plies plies, the legal moves read from `d`), in one engine. Then,
for each, a new engine process is started, given the tables
(`setoption name TablebasePath`, then `isready`, which waits for the load)
and asked `solve`: the time from writing `solve` to reading its answer.

Usage: tools/tables/solve_latency.py BIN SIZE RULES DIR [--positions 1000]
       [--seed 1] [--max-plies 60] [--cold] [--cars K]
(--cold: the operating system's page cache is dropped after each load,
before `solve`, so every block it reads comes from the disk; needs root.
--cars K: for endgame tables, random placements of 1 to K cars a side
instead of positions from the start, each with a legal move.)
Prints the median, 90th and 99th percentiles and the maximum in
milliseconds, the median load (`setoption name TablebasePath` to
`readyok`), and the answers by kind (win / draw / loss / other).
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from latency import Engine  # noqa: E402  (tools/latency.py: the engine over pipes)


def random_games(binary, size, rules, count, seed, max_plies):
    rng = random.Random(seed)
    engine = Engine(binary)
    engine.send(f"setoption name BoardSize value {size}")
    engine.send(f"setoption name Rules value {rules}")
    games = []
    while len(games) < count:
        moves = []
        for _ in range(rng.randrange(max_plies + 1)):
            engine.send("position startpos moves " + " ".join(moves))
            engine.send("d")
            line = engine.lines_until("Legal moves:")[-1]
            legal = line.split(":", 1)[1].split()
            engine.send("isready")
            lines = engine.lines_until("readyok")
            status = next((l for l in lines if l.startswith("Status:")), "")
            if not legal or "to move" not in status:
                break
            moves.append(rng.choice(legal))
        engine.send("position startpos moves " + " ".join(moves))
        engine.send("d")
        lines = engine.lines_until("Status:")
        if "to move" in lines[-1]:
            games.append(moves)
    engine.quit()
    return games


def random_endgames(binary, size, rules, count, seed, cars):
    """FENs of random placements of 1 to `cars` cars a side, either side to
    move, each with a legal move and not finished."""
    rng = random.Random(seed)
    engine = Engine(binary)
    engine.send(f"setoption name BoardSize value {size}")
    engine.send(f"setoption name Rules value {rules}")
    fens = []
    while len(fens) < count:
        board = ["."] * (size * size)
        for piece in "BW":
            for _ in range(rng.randint(1, cars)):
                square = rng.randrange(size * size)
                if board[square] == ".":
                    board[square] = piece
        rows = []
        for r in range(size):
            row, empty = "", 0
            for c in board[r * size:(r + 1) * size]:
                if c == ".":
                    empty += 1
                else:
                    row += (str(empty) if empty else "") + c
                    empty = 0
            rows.append(row + (str(empty) if empty else ""))
        fen = "/".join(rows) + " " + rng.choice("bw")
        engine.send(f"position fen {fen}")
        engine.send("d")
        lines = engine.lines_until("Status:")
        legal = next((l for l in lines if l.startswith("Legal moves:")), "")
        if "to move" in lines[-1] and legal.split(":", 1)[1].split():
            fens.append(fen)
    engine.quit()
    return fens


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("size", type=int)
    parser.add_argument("rules")
    parser.add_argument("dir")
    parser.add_argument("--positions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-plies", type=int, default=60)
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--cars", type=int)
    args = parser.parse_args()
    if args.cars:
        positions = [
            "position fen " + fen
            for fen in random_endgames(
                args.binary, args.size, args.rules, args.positions, args.seed, args.cars
            )
        ]
    else:
        positions = [
            "position startpos moves " + " ".join(moves)
            for moves in random_games(
                args.binary, args.size, args.rules, args.positions, args.seed, args.max_plies
            )
        ]
    times = []
    loads = []
    kinds = {}
    for position in positions:
        engine = Engine(args.binary)
        engine.send(f"setoption name BoardSize value {args.size}")
        engine.send(f"setoption name Rules value {args.rules}")
        engine.send("isready")
        engine.lines_until("readyok")
        loading = time.perf_counter()
        engine.send(f"setoption name TablebasePath value {args.dir}")
        engine.send("isready")
        lines = engine.lines_until("readyok", timeout=600)
        loads.append((time.perf_counter() - loading) * 1000)
        errors = [l for l in lines if "error" in l]
        if errors:
            sys.exit("the tables did not load: " + errors[0])
        engine.send(position)
        if args.cold:
            subprocess.run(["sync"], check=True)
            with open("/proc/sys/vm/drop_caches", "w") as caches:
                caches.write("3\n")
        started = time.perf_counter()
        engine.send("solve")
        answer = engine.lines_until("solve")[-1]
        times.append((time.perf_counter() - started) * 1000)
        kind = answer.split()[1] if len(answer.split()) > 1 else answer
        kinds[kind] = kinds.get(kind, 0) + 1
        engine.quit()
    times.sort()
    q = lambda p: times[min(len(times) - 1, int(p * len(times)))]
    print(
        f"{len(times)} positions: median {statistics.median(times):.2f} ms, "
        f"90th {q(0.9):.2f} ms, 99th {q(0.99):.2f} ms, max {times[-1]:.2f} ms; "
        f"load median {statistics.median(loads):.1f} ms; answers {kinds}"
    )


if __name__ == "__main__":
    main()
