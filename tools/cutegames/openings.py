#!/usr/bin/env python3
"""Writes distinct random openings for a cutegames match, one FEN a line.

Usage: openings.py ENGINE SIZE COUNT PLIES SEED [RULES [TABLES]] > openings.txt

Each opening is the position after PLIES random legal moves from the start
of a SIZE x SIZE board, as the engine ENGINE (a `dodgem` binary) writes it
(`d`, the `Fen:` line), so that `position fen <line>` sets it up. The
moves come from the engine's own move generator (`go perft 1`); the same
SEED gives the same openings.

With RULES (textbook or classic) only openings that are drawn under that
rule are kept, as the engine's `solve` says from its built-in tables
(3 x 3, 4 x 4) or from the table directory TABLES: drawn starts for
matches that measure how often a weaker opponent goes wrong.
"""

import random
import subprocess
import sys


def main():
    engine, size, count, plies, seed = sys.argv[1], *map(int, sys.argv[2:6])
    rules = sys.argv[6] if len(sys.argv) > 6 else None
    tables = sys.argv[7] if len(sys.argv) > 7 else ""
    rng = random.Random(seed)
    proc = subprocess.Popen([engine], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(commands, last):
        for command in commands:
            proc.stdin.write(command + "\n")
        proc.stdin.flush()
        lines = []
        while True:
            line = proc.stdout.readline()
            if not line:
                sys.exit(f"{engine} ended before answering {commands}")
            lines.append(line.strip())
            if lines[-1].startswith(last):
                return lines

    setup = ["uci", f"setoption name BoardSize value {size}"]
    if rules:
        setup += [f"setoption name Rules value {rules}", f"setoption name TablebasePath value {tables}"]
    ask(setup + ["isready"], "readyok")
    seen = set()
    tries = 0
    while len(seen) < count and tries < 100 * count:
        tries += 1
        moves = []
        for _ in range(plies):
            lines = ask([f"position startpos moves {' '.join(moves)}", "go perft 1"], "Nodes searched")
            legal = [l.split(":")[0] for l in lines if l.endswith(": 1")]
            if not legal:
                break
            moves.append(rng.choice(legal))
        lines = ask([f"position startpos moves {' '.join(moves)}", "d"], "Fen:")
        if rules and ask(["solve"], "solve")[-1] != "solve draw":
            continue
        seen.add(lines[-1].split(":", 1)[1].strip())
    proc.stdin.write("quit\n")
    proc.stdin.flush()
    for fen in sorted(seen):
        print(fen)


if __name__ == "__main__":
    main()
