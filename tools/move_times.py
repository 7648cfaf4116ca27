#!/usr/bin/env python3
"""Time per move by engine from `dodgem match --pgn` (or gauntlet) records.

Each move's comment holds the last score the engine reported, its depth
and the time charged (`{cp 82/20 0.116s}`, `{mate 5/3 0.002s}`,
`{0.004s}`; see docs/matches.md). Moves are split into those reported
with a mate score (a result the search has proven: these should be
quick) and the rest, and for each engine and kind this prints the
moves, their mean time, mean depth and the longest time.

Usage: tools/move_times.py FILE.pgn...
"""

import re
import sys
from collections import defaultdict

TAG = re.compile(r'\[(\w+) "((?:[^"\\]|\\.)*)"\]')
COMMENT = re.compile(r"\{(?:(cp|mate) -?\d+/(\d+) )?(\d+(?:\.\d+)?)s\}")


def main(paths):
    # engine -> kind -> list of (seconds, depth or None)
    moves = defaultdict(lambda: defaultdict(list))
    for path in paths:
        with open(path, encoding="utf-8") as records:
            text = records.read()
        for record in re.split(r"\n(?=\[Event )", text):
            tags = dict(TAG.findall(record))
            if "Black" not in tags:
                continue
            first_black = not tags.get("FEN", "").endswith(" w")
            order = ["Black", "White"] if first_black else ["White", "Black"]
            body = record[record.rfind('"]') + 2 :]
            for ply, (kind, depth, seconds) in enumerate(COMMENT.findall(body)):
                engine = tags[order[ply % 2]]
                kind = "mate" if kind == "mate" else "other"
                moves[engine][kind].append((float(seconds), int(depth) if depth else None))
    for engine in sorted(moves):
        for kind in ("mate", "other"):
            found = moves[engine][kind]
            if not found:
                continue
            times = [seconds for seconds, _ in found]
            depths = [depth for _, depth in found if depth is not None]
            mean_depth = sum(depths) / len(depths) if depths else float("nan")
            print(
                f"{engine}: {kind:5} {len(found):6} moves, "
                f"mean {sum(times) / len(times):.4f} s, "
                f"mean depth {mean_depth:.1f}, longest {max(times):.3f} s"
            )


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
