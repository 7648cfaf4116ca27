#!/usr/bin/env python3
"""Measures how long `dodgem` takes to answer `stop` and `isready`.

Drives the engine over pipes and times each reply from the moment the
command is written to the moment its answer is read. Scenarios:

  newgame   Hash 4096 on 6 x 6: a short search fills part of the table,
            then `ucinewgame`, `go infinite` and `stop` at once; the time
            to `bestmove` after `stop`.
  rules     the same with a change of `Rules` instead of `ucinewgame`.
  hash      the same with `setoption name Hash` (4095 and 4096 in turn):
            a new table, the old one freed meanwhile.
  stop      `go infinite`, a pause of 0-20 ms, `stop` (default hash).
  isready   `isready` during a running search.
  movetime  `go movetime 300`: the time to `bestmove`.

Usage: tools/latency.py [--bin target/release/dodgem] [--trials 100]
       [--fill-ms 50] [--idle-ms 0] SCENARIO...
(--idle-ms: a pause after each trial of newgame, rules and hash, as
between the moves of a game.)
Prints median, 95th percentile and maximum in milliseconds, and how many
replies took longer than 20 ms (330 ms for movetime, the tests' limits).
"""

import argparse
import os
import select
import subprocess
import sys
import time


class Engine:
    def __init__(self, binary):
        self.proc = subprocess.Popen(
            [binary],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            bufsize=0,
        )
        self.buffer = b""

    def send(self, line):
        os.write(self.proc.stdin.fileno(), (line + "\n").encode())
        return time.monotonic()

    def line(self, timeout=20.0):
        """The next stdout line and the instant it was read."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                raise TimeoutError("no reply from the engine")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError("the engine closed its output")
            self.buffer += chunk
        at = time.monotonic()
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode(), at

    def until(self, prefix):
        while True:
            line, at = self.line()
            if line.startswith(prefix):
                return line, at

    def lines_until(self, prefix, timeout=20.0):
        """Every line up to and with the first that starts with `prefix`."""
        lines = []
        while True:
            line, _ = self.line(timeout)
            lines.append(line)
            if line.startswith(prefix):
                return lines

    def sync(self):
        self.send("isready")
        self.until("readyok")

    def quit(self):
        self.send("quit")
        self.proc.wait(timeout=20)


def fill(engine, fill_ms):
    """A short search, so that the table has pages in use."""
    engine.send("go infinite")
    time.sleep(fill_ms / 1000)
    engine.send("stop")
    engine.until("bestmove")


def newgame(engine, trials, fill_ms, change, idle_ms=0):
    engine.send("setoption name BoardSize value 6")
    engine.send("setoption name Hash value 4096")
    engine.sync()
    latencies = []
    for trial in range(trials):
        fill(engine, fill_ms)
        engine.send(change(trial))
        engine.send("go infinite")
        sent = engine.send("stop")
        _, at = engine.until("bestmove")
        latencies.append(at - sent)
        engine.sync()
        time.sleep(idle_ms / 1000)
    return latencies


def stop(engine, trials, _fill_ms, _idle_ms):
    engine.send("setoption name BoardSize value 6")
    engine.sync()
    latencies = []
    for trial in range(trials):
        engine.send("go infinite")
        time.sleep(trial * 7 % 21 / 1000)
        sent = engine.send("stop")
        _, at = engine.until("bestmove")
        latencies.append(at - sent)
    return latencies


def isready(engine, trials, _fill_ms, _idle_ms):
    engine.send("setoption name BoardSize value 6")
    engine.sync()
    engine.send("go infinite")
    time.sleep(0.05)
    latencies = []
    for trial in range(trials):
        sent = engine.send("isready")
        _, at = engine.until("readyok")
        latencies.append(at - sent)
        time.sleep(trial * 3 % 11 / 1000)
    engine.send("stop")
    engine.until("bestmove")
    return latencies


def movetime(engine, trials, _fill_ms, _idle_ms):
    latencies = []
    for trial in range(trials):
        engine.send(f"setoption name BoardSize value {5 + trial % 2}")
        engine.send("position startpos")
        engine.sync()
        sent = engine.send("go movetime 300")
        _, at = engine.until("bestmove")
        latencies.append(at - sent)
    return latencies


SCENARIOS = {
    "newgame": lambda e, n, f, i: newgame(e, n, f, lambda _: "ucinewgame", i),
    "rules": lambda e, n, f, i: newgame(
        e, n, f, lambda t: "setoption name Rules value " + ("classic", "textbook")[t % 2], i
    ),
    "hash": lambda e, n, f, i: newgame(
        e, n, f, lambda t: "setoption name Hash value " + ("4095", "4096")[t % 2], i
    ),
    "stop": stop,
    "isready": isready,
    "movetime": movetime,
}


def percentile(sorted_values, fraction):
    index = min(len(sorted_values) - 1, int(round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="target/release/dodgem")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--fill-ms", type=int, default=50)
    parser.add_argument("--idle-ms", type=int, default=0)
    parser.add_argument("scenarios", nargs="+", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    for name in args.scenarios:
        engine = Engine(args.bin)
        values = sorted(1000 * v for v in SCENARIOS[name](engine, args.trials, args.fill_ms, args.idle_ms))
        # The reply bound, or for movetime 300 the tests' limit.
        bound = 330 if name == "movetime" else 20
        engine.quit()
        print(
            f"{name:9} n={len(values)} median {percentile(values, 0.5):7.2f} ms"
            f"  p95 {percentile(values, 0.95):7.2f} ms  max {values[-1]:7.2f} ms"
            f"  over {bound} ms: {sum(v > bound for v in values)}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
