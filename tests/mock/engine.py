#!/usr/bin/env python3
"""A scripted Dodgem engine for the referee's tests.

Usage: engine.py MODE

It speaks just enough of protocol.md (uci, isready, setoption, ucinewgame,
position fen ... moves ..., go, stop, quit) and plays the first legal move
in a fixed order (exits, then forward moves, then sideways moves), so games
against it end quickly. Every mode but `legal` misbehaves once, at its
second `go` (so the game is under way) or earlier where the mode says so:

  legal     never misbehaves
  sideways  never misbehaves, but prefers sideways moves (so games repeat)
  illegal   plays a well-formed but illegal move
  garbage   answers `bestmove xyzzy`
  none      answers `bestmove (none)`
  stall     stops answering anything, even `stop`, `isready` and `quit`,
            and stays alive after its input closes (it must be killed)
  exit      exits with status 4 without answering
  slow      answers, but only half a second after its clock has run out
  noready   never answers `isready` (the handshake before a game stalls)
  crash     exits with status 3 at `ucinewgame`
  nouci     never answers `uci`
"""

import sys
import time

MODES = {"legal", "sideways", "illegal", "garbage", "none", "stall", "exit", "slow",
         "noready", "crash", "nouci"}


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def square(file, rank):
    return chr(ord("a") + file) + str(rank + 1)


def parse_position(tokens):
    """`fen <board> <side> [moves ...]` -> (size, cars, side)."""
    board, side = tokens[1], tokens[2]
    ranks = board.split("/")
    size = len(ranks)
    cars = {}
    for row, text in enumerate(ranks):
        rank, file = size - 1 - row, 0
        for c in text:
            if c in "BW":
                cars[(file, rank)] = c
                file += 1
            else:
                file += int(c)
    side = side.upper()
    if "moves" in tokens:
        for move in tokens[tokens.index("moves") + 1:]:
            start = (ord(move[0]) - ord("a"), int(move[1]) - 1)
            end = (ord(move[2]) - ord("a"), int(move[3]) - 1)
            del cars[start]
            if 0 <= end[0] < size and 0 <= end[1] < size:
                cars[end] = side
            side = "W" if side == "B" else "B"
    return size, cars, side


def legal_moves(size, cars, side):
    """Exits, then forward moves, then sideways moves."""
    forward = (1, 0) if side == "B" else (0, 1)
    sideways = [(0, 1), (0, -1)] if side == "B" else [(-1, 0), (1, 0)]
    exits, ahead, aside = [], [], []
    for (file, rank), car in sorted(cars.items()):
        if car != side:
            continue
        for step in [forward] + sideways:
            to = (file + step[0], rank + step[1])
            name = square(file, rank) + square(*to)
            if step == forward and (to[0] == size or to[1] == size):
                exits.append(name)
            elif 0 <= to[0] < size and 0 <= to[1] < size and to not in cars:
                (ahead if step == forward else aside).append(name)
    return exits + ahead + aside


def is_sideways(move, side):
    column = 1 if side == "B" else 0  # the coordinate a sideways move changes
    return move[column] != move[column + 2]


def illegal_move(size, cars, side):
    """A one-square step on the board that is not a legal move."""
    legal = set(legal_moves(size, cars, side))
    for file in range(size):
        for rank in range(size):
            for step in [(1, 0), (0, 1), (0, -1), (-1, 0)]:
                to = (file + step[0], rank + step[1])
                if 0 <= to[0] < size and 0 <= to[1] < size:
                    name = square(file, rank) + square(*to)
                    if name not in legal:
                        return name
    return "a1a2"


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "legal"
    if mode not in MODES:
        sys.exit("unknown mode " + mode)
    position = None
    gos = 0
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        tokens = line.split()
        if not tokens:
            continue
        command = tokens[0]
        if command == "uci":
            if mode == "nouci":
                continue
            say("id name mock-" + mode)
            say("id author the dodgem tests")
            say("option name Rules type combo default textbook var textbook var classic")
            say("option name Hash type spin default 1 min 1 max 64")
            say("uciok")
        elif command == "isready":
            if mode != "noready":
                say("readyok")
        elif command == "ucinewgame":
            if mode == "crash":
                sys.exit(3)
        elif command == "position":
            position = parse_position(tokens[1:])
        elif command == "go":
            gos += 1
            size, cars, side = position
            misbehave = gos == 2
            if misbehave and mode == "stall":
                while True:
                    time.sleep(60)
            if misbehave and mode == "exit":
                sys.exit(4)
            if misbehave and mode == "slow":
                clock = "wtime" if side == "W" else "btime"
                remaining = int(tokens[tokens.index(clock) + 1])
                time.sleep(remaining / 1000 + 0.5)
            say("info depth 1 score cp 0 nodes 1 pv")
            if misbehave and mode == "illegal":
                say("bestmove " + illegal_move(size, cars, side))
            elif misbehave and mode == "garbage":
                say("bestmove xyzzy")
            elif misbehave and mode == "none":
                say("bestmove (none)")
            else:
                moves = legal_moves(size, cars, side)
                if mode == "sideways":
                    moves = [m for m in moves if is_sideways(m, side)] + moves
                say("bestmove " + (moves[0] if moves else "(none)"))
        elif command == "quit":
            break


if __name__ == "__main__":
    main()
