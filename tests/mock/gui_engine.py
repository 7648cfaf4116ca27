#!/usr/bin/env python3
"""A wrapper around the real engine for the GUI's tests: the engines a GUI
meets that are not this one (with no levels, with levels by Elo, without
`solve`), to check that `dodgem gui` uses what an engine offers and does
without what it lacks.

Usage: gui_engine.py ENGINE LOG MODE

Runs ENGINE (the `dodgem` binary) and passes lines both ways, writing every
line it receives to the file LOG (one per line, flushed). Whatever ENGINE
offers of the options below is hidden (its `option` lines dropped), so the
modes mean the same with any version of it. By MODE:

  plain    no levels and no win/draw/loss figures
  skill    advertises `Skill Level` (spin 0..20) and `UCI_ShowWDL`; takes
           their `setoption`s itself; under UCI_ShowWDL adds
           `wdl <w> <d> <l>` after each `score` of an `info` line
  elo      the same with `UCI_LimitStrength` and `UCI_Elo` (800..2400)
  nosolve  no levels, and no `solve`: the command is dropped unanswered
"""

import subprocess
import sys
import threading

ENGINE, LOG, MODE = sys.argv[1], sys.argv[2], sys.argv[3]
EXTRA = {
    "skill": [
        "option name Skill Level type spin default 20 min 0 max 20",
        "option name UCI_ShowWDL type check default false",
    ],
    "elo": [
        "option name UCI_LimitStrength type check default false",
        "option name UCI_Elo type spin default 2400 min 800 max 2400",
        "option name UCI_ShowWDL type check default false",
    ],
    "plain": [],
    "nosolve": [],
}[MODE]
OWN = {"skill level", "uci_showwdl", "uci_limitstrength", "uci_elo"}

child = subprocess.Popen([ENGINE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, bufsize=1)
log = open(LOG, "a", buffering=1)
show_wdl = False
lock = threading.Lock()


def say(line):
    with lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def with_wdl(line):
    """`info ... score cp X ...` with `wdl` after the score."""
    words = line.split()
    if words[:1] != ["info"] or "string" in words or "score" not in words:
        return line
    at = words.index("score")
    kind, value = words[at + 1], int(words[at + 2])
    if kind == "mate":
        wdl = [1000, 0, 0] if value > 0 else [0, 0, 1000]
    else:
        win = max(0, min(1000, 400 + 2 * value))
        loss = max(0, min(1000 - win, 400 - 2 * value))
        wdl = [win, 1000 - win - loss, loss]
    return " ".join(words[:at + 3] + ["wdl"] + [str(x) for x in wdl] + words[at + 3:])


def pump_out():
    for line in child.stdout:
        line = line.rstrip("\n")
        words = line.split()
        if words[:2] == ["option", "name"] and "type" in words:
            if " ".join(words[2:words.index("type")]).lower() in OWN:
                continue
        if line == "uciok":
            for extra in EXTRA:
                say(extra)
        if show_wdl:
            line = with_wdl(line)
        say(line)
    sys.stdout.close()


threading.Thread(target=pump_out, daemon=True).start()

for line in sys.stdin:
    line = line.rstrip("\n")
    log.write(line + "\n")
    words = line.split()
    if words[:2] == ["setoption", "name"] and "value" in words:
        name = " ".join(words[2:words.index("value")]).lower()
        value = " ".join(words[words.index("value") + 1:])
        if name in OWN:
            if name == "uci_showwdl":
                show_wdl = value.lower() == "true"
            continue
    if MODE == "nosolve" and words[:1] == ["solve"]:
        continue
    child.stdin.write(line + "\n")
    child.stdin.flush()

child.stdin.close()
child.wait()
