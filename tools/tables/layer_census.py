#!/usr/bin/env python3
"""Writes the census of every layer of a solved table directory, from its
layer files' headers: for each layer (Black's progress, White's), the
positions with Black to move and with White to move, and the wins, draws
and losses of each for the side to move.

Only Black to move is stored: the White-to-move positions of layer (a, b)
are, reflected in the diagonal with the colours swapped, the Black-to-move
positions of layer (b, a), with the same values. Every layer file format
holds the counts at the same place (bytes 32..56 of the header: wins,
draws, losses, little-endian). A layer's `.wdl` file is read where there
is one (the one pass's tables), else its `.dtz` file (the two passes').

Usage: tools/tables/layer_census.py DIR > census.tsv
A check of the totals against `dodgem solve`'s summary is printed on
stderr.
"""

import glob
import os
import re
import struct
import sys


def counts(path):
    with open(path, "rb") as f:
        header = f.read(80)
    if len(header) < 80 or header[:8] != b"DODGEMLT":
        raise SystemExit(f"{path} is not a dodgem layer file")
    return struct.unpack_from("<QQQ", header, 32)


def main():
    directory = sys.argv[1]
    layers = {}
    for path in sorted(glob.glob(os.path.join(directory, "layer-*-*.*"))):
        found = re.search(r"layer-(\d+)-(\d+)\.(wdl|dtz)$", path)
        if not found:
            continue
        a, b = int(found.group(1)), int(found.group(2))
        if found.group(3) == "wdl" or (a, b) not in layers:
            layers[(a, b)] = counts(path)
    print("black_progress\twhite_progress\tpositions_black_to_move\tblack_to_move_wins"
          "\tblack_to_move_draws\tblack_to_move_losses\tpositions_white_to_move"
          "\twhite_to_move_wins\twhite_to_move_draws\twhite_to_move_losses")
    totals = [0, 0, 0]
    for (a, b) in sorted(layers):
        black = layers[(a, b)]
        white = layers[(b, a)]
        for i in range(3):
            totals[i] += black[i]
        print(f"{a}\t{b}\t{sum(black)}\t{black[0]}\t{black[1]}\t{black[2]}"
              f"\t{sum(white)}\t{white[0]}\t{white[1]}\t{white[2]}")
    print(f"{len(layers)} layers; positions a side to move {sum(totals):,}: "
          f"{totals[0]:,} wins, {totals[1]:,} draws, {totals[2]:,} losses",
          file=sys.stderr)


if __name__ == "__main__":
    main()
