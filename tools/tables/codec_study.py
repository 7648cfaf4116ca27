#!/usr/bin/env python3
"""How compressible a layer's win/draw/loss is, coded several ways.

Reads a dump of one layer made by `examples/dumpwdl.rs` (a byte a slot: 0
draw, 1 win, 2 loss, 3 no position; and its blocks: first slot, rows,
columns) and measures, on ROWS rows from row FIRST of its largest block,
in bits a position:

  zstd      zstd levels 3 and 19 on the whole stream, level 19 on blocks
            of 16,384 / 65,536 / 262,144 slots, blocks of 4 rows and of
            131,072 slots with a dictionary of 64 rows (raw content), and
            the compression speed of each level for the latter
  rows      how far each row agrees with the row before it and with the
            best of the rows before it
  refs      each row coded as its differences from the best of 64 rows
            spread over the whole block, against the row coded plainly
            (entropy of the runs' symbols given the run before, plus the
            runs' extra bits)

Needs numpy and zstandard (`pip install numpy zstandard`).

Usage:
  cargo run --release --example dumpwdl -- DIR 14 14 0 4000000000 /tmp/l1414
  tools/tables/codec_study.py /tmp/l1414 zstd|rows|refs [--first 10000] [--rows 800]
"""

import argparse
import collections
import math
import time

import numpy as np
import zstandard as zstd


def largest_block(prefix):
    blocks = [tuple(map(int, l.split())) for l in open(prefix + ".blocks")]
    return max(blocks, key=lambda b: b[1] * b[2])


def filled(a):
    """Slots that are no position take the value before them."""
    flat = a.ravel()
    idx = np.where(flat != 3, np.arange(len(flat)), 0)
    return flat[np.maximum.accumulate(idx)]


def zstd_study(a, positions):
    bits = lambda n: round(n * 8 / positions, 3)
    f = filled(a)
    for level in (3, 19):
        n = len(zstd.ZstdCompressor(level=level).compress(f.tobytes()))
        print(f"zstd {level}, the whole stream: {bits(n)}")
    for size in (16384, 65536, 262144):
        c = zstd.ZstdCompressor(level=19)
        n = sum(len(c.compress(f[i:i + size].tobytes())) for i in range(0, len(f), size))
        print(f"zstd 19, blocks of {size} slots: {bits(n)}")
    rows, columns = a.shape
    fr = f.reshape(rows, columns)
    keys = np.linspace(0, rows - 1, 64).astype(int)
    raw = b"".join(fr[k].tobytes() for k in keys)
    dictionary = zstd.ZstdCompressionDict(raw, dict_type=zstd.DICT_TYPE_RAWCONTENT)
    stored = len(zstd.ZstdCompressor(level=19).compress(raw))
    c = zstd.ZstdCompressor(level=19, dict_data=dictionary)
    blocks = [c.compress(fr[i:i + 4].tobytes()) for i in range(0, rows, 4)]
    d = zstd.ZstdDecompressor(dict_data=dictionary)
    started = time.perf_counter()
    for b in blocks[:20]:
        d.decompress(b)
    micros = (time.perf_counter() - started) / min(20, len(blocks)) * 1e6
    print(f"zstd 19, blocks of 4 rows, a dictionary of 64 rows: "
          f"{bits(sum(map(len, blocks)))} + {bits(stored)} (decode {micros:.0f} us a block)")
    for level in (3, 9, 15, 19):
        c = zstd.ZstdCompressor(level=level, dict_data=dictionary)
        started = time.perf_counter()
        n = sum(len(c.compress(f[i:i + 131072].tobytes())) for i in range(0, len(f), 131072))
        speed = len(f) / (time.perf_counter() - started) / 1e6
        print(f"zstd {level}, blocks of 131072 slots with that dictionary: {bits(n)} ({speed:.0f} MB/s)")


def rows_study(a):
    rows = a.shape[0]
    m = (a[1:] != 3) & (a[:-1] != 3)
    print(f"agreement with the row before: {(a[1:] == a[:-1])[m].mean():.4f}")
    best, shares = collections.Counter(), []
    for i in range(rows - 100, rows, 4):
        row, cared = a[i], a[i] != 3
        same = ((a[:i] == row) | (a[:i] == 3))[:, cared].mean(axis=1)
        j = int(np.argmax(same))
        best[i - j] += 1
        shares.append(same[j])
    print(f"agreement with the best earlier row: {np.mean(shares):.4f}; "
          f"its distances: {best.most_common(8)}")


def run_symbols(values, counts):
    """Counts the runs' (value, length class) given the run before; returns
    the runs' extra bits."""
    change = np.flatnonzero(np.diff(values.astype(np.int16))) + 1
    starts = np.concatenate([[0], change])
    lengths = np.diff(np.concatenate([starts, [len(values)]]))
    classes = np.floor(np.log2(lengths)).astype(int)
    kinds = values[starts]
    before = np.concatenate([[9], kinds[:-1]])
    for k, c, b in zip(kinds, classes, before):
        counts[b][(k, c)] += 1
    return int(classes.sum())


def entropy(counts):
    total = 0.0
    for d in counts.values():
        n = sum(d.values())
        total -= sum(k * math.log2(k / n) for k in d.values())
    return total


def refs_study(block, sample=300):
    rows, columns = block.shape
    refs = np.linspace(0, rows - 1, 64).astype(int)
    reference = block[refs]
    chosen = np.sort(np.random.default_rng(1).choice(rows, sample, replace=False))
    coded, plain = collections.defaultdict(collections.Counter), collections.defaultdict(collections.Counter)
    extra = [0, 0]
    positions, shares = 0, []
    for r in chosen:
        row, cared = block[r], block[r] != 3
        positions += cared.sum()
        same = ((reference == row) | (reference == 3))[:, cared].mean(axis=1)
        j = int(np.argmax(np.where(refs == r, -1, same)))
        shares.append(same[j])
        diff = np.where(cared, np.where(row == reference[j], 0, row + 1), 255).astype(np.uint8)
        extra[0] += run_symbols(filled(np.where(diff == 255, 3, diff)), coded)
        extra[1] += run_symbols(filled(row), plain)
    print(f"best of 64 spread rows agrees on {np.mean(shares):.4f}; coded as differences "
          f"{(entropy(coded) + extra[0]) / positions:.3f} bits a position, "
          f"plainly {(entropy(plain) + extra[1]) / positions:.3f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("prefix")
    parser.add_argument("study", choices=["zstd", "rows", "refs"])
    parser.add_argument("--first", type=int, default=10000)
    parser.add_argument("--rows", type=int, default=800)
    args = parser.parse_args()
    values = np.memmap(args.prefix + ".wdl", dtype=np.uint8, mode="r")
    first_slot, rows, columns = largest_block(args.prefix)
    if args.study == "refs":
        block = np.array(values[first_slot:first_slot + rows * columns]).reshape(rows, columns)
        refs_study(block)
        return
    start = first_slot + args.first * columns
    a = np.array(values[start:start + args.rows * columns]).reshape(args.rows, columns)
    positions = int((a != 3).sum())
    print(f"rows {args.first} to {args.first + args.rows}: {positions} positions")
    if args.study == "zstd":
        zstd_study(a, positions)
    else:
        rows_study(a)


if __name__ == "__main__":
    main()
