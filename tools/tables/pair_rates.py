#!/usr/bin/env python3
"""Per-pair solve rates from a `dodgem solve` log (one line a pair): slots
a second of one rank, over all pairs and over the large ones, with the
share of the time each phase took. Input for the cluster plan in
docs/tables.md.

    python3 tools/tables/pair_rates.py SOLVE.log [MIN_SLOTS]
"""
import re
import sys

LINE = re.compile(
    r"^solved pair \d+/\d+ .*?: (\d+) slots, (\d+) positions .*? in ([\d.]+) s "
    r"\(read ([\d.]+), solve ([\d.]+), write ([\d.]+)(?:, distances to the end ([\d.]+))?; "
    r".*files ([\d.]+) MiB"
)


def main():
    path = sys.argv[1]
    least = float(sys.argv[2]) if len(sys.argv) > 2 else 1e8
    rows = []
    for line in open(path, encoding="utf-8", errors="replace"):
        m = LINE.match(line)
        if m:
            slots, positions, seconds, read, solve, write, dte, mib = m.groups()
            rows.append((int(slots), int(positions), float(seconds), float(read),
                         float(solve), float(write), float(dte or 0), float(mib)))
    for name, chosen in (("all pairs", rows), (f"pairs of {least:.0e} slots or more",
                                               [r for r in rows if r[0] >= least])):
        if not chosen:
            continue
        slots = sum(r[0] for r in chosen)
        positions = sum(r[1] for r in chosen)
        seconds = sum(r[2] for r in chosen)
        phases = [sum(r[i] for r in chosen) / seconds for i in (3, 4, 5, 6)]
        mib = sum(r[7] for r in chosen)
        print(f"{name}: {len(chosen)} pairs, {slots:.4g} slots ({positions / slots:.3f} positions a slot), "
              f"{seconds:.0f} s of one rank: {slots / seconds:.3g} slots/s; "
              f"read {phases[0]:.0%}, solve {phases[1]:.0%}, write {phases[2]:.0%}, distances {phases[3]:.0%}; "
              f"files {mib * 8 * 2**20 / slots:.3f} bits a slot")


if __name__ == "__main__":
    main()
