#!/usr/bin/env python3
"""Mistakes each engine made in positions a table directory covers, from
`dodgem match --pgn` records.

Every game is replayed in a `dodgem` engine with the directory loaded;
from the first position the tables cover, each move's result is compared
with the table's value before it: a move that turns the mover's win into
a draw or loss, or its draw into a loss, is a mistake (half a point or
a whole one given away). For each engine this prints the games that
reached a covered position, the moves it made there, its mistakes and
the points they gave away; and how the covered positions stood when the
games first reached them.

usage: table_errors.py DODGEM TABLE_DIR FILE.pgn...
"""

import re
import subprocess
import sys
from collections import Counter, defaultdict

TAG = re.compile(r'\[(\w+) "((?:[^"\\]|\\.)*)"\]')
MOVE = re.compile(r"^[a-h][1-8][a-i][0-9]$")
# The value for the side to move, as a number: win 1, draw 0, loss -1.
VALUE = {"win": 1, "draw": 0, "loss": -1}


class Engine:
    def __init__(self, binary, size, rules, tables):
        self.process = subprocess.Popen(
            [binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.send("uci")
        self.until("uciok")
        self.send(f"setoption name BoardSize value {size}")
        self.send(f"setoption name Rules value {rules}")
        self.send(f"setoption name TablebasePath value {tables}")
        self.send("isready")
        loaded = self.until("readyok")
        if not any(line.startswith("info string loaded") for line in loaded):
            sys.exit(f"the engine did not load {tables}: {loaded}")

    def send(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def until(self, prefix):
        lines = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                sys.exit("the engine ended: " + "\n".join(lines))
            lines.append(line.rstrip())
            if line.startswith(prefix):
                return lines

    def value(self, fen, moves):
        """The table's value for the side to move, or None if not covered."""
        self.send(f"position fen {fen} moves {' '.join(moves)}".rstrip())
        self.send("solve")
        answer = self.until("solve")[-1].split()
        return VALUE.get(answer[1]) if len(answer) > 1 else None


def games(paths):
    for path in paths:
        with open(path, encoding="utf-8") as records:
            text = records.read()
        for record in re.split(r"\n(?=\[Event )", text):
            tags = dict(TAG.findall(record))
            if "FEN" not in tags:
                continue
            body = re.sub(r"\{[^}]*\}", " ", record.split("\n\n", 1)[-1])
            moves = [t for t in body.split() if MOVE.match(t)]
            yield tags, moves


def main(binary, tables, paths):
    engine = None
    reached = Counter()
    moves_made = Counter()
    mistakes = defaultdict(list)
    first = Counter()
    for tags, moves in games(paths):
        if engine is None:
            engine = Engine(binary, tags["BoardSize"], tags["Rules"], tables)
        fen = tags["FEN"]
        names = {"b": tags["Black"], "w": tags["White"]}
        to_move = fen.split()[-1]

        def mover(ply):
            return names[to_move if ply % 2 == 0 else {"b": "w", "w": "b"}[to_move]]

        before = None
        for ply in range(len(moves) + 1):
            now = engine.value(fen, moves[:ply])
            if now is None:
                if before is not None and ply < len(moves):
                    sys.exit(f"round {tags.get('Round')}: ply {ply} left the tables")
                before = None
                continue
            if before is None:
                reached[names["b"]] += 1
                reached[names["w"]] += 1
                first[{1: "won", 0: "drawn", -1: "lost"}[now] + " for " + mover(ply)] += 1
            else:
                # `before` was the value for the previous mover; what its
                # move left it is minus the value for this one.
                left = -now
                moves_made[mover(ply - 1)] += 1
                if left < before:
                    mistakes[mover(ply - 1)].append((tags.get("Round"), ply, before - left))
            before = now
    if engine is None:
        sys.exit("no games")
    engine.send("quit")
    for name in sorted(reached):
        lost = sum(points for _, _, points in mistakes[name]) / 2
        print(f"{name}: {reached[name]} games reached the tables, "
              f"{moves_made[name]} moves there, {len(mistakes[name])} mistakes, "
              f"{lost:g} points given away")
        for round_, ply, points in mistakes[name]:
            print(f"  round {round_}, ply {ply}: {'a whole point' if points == 2 else 'half a point'}")
    print("first covered position:", ", ".join(f"{k} {v}" for k, v in sorted(first.items())))


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
