#!/usr/bin/env python3
"""Sums an ncu CSV of gpu__time_duration.sum per kernel (verification/issue29_gpu.sh kprof mode).

usage: kernel_times.py KPROF.csv [--top N] [--from I --count C]
  default: the kernels by total time (count, mean); --from/--count: that window of launches in order.
Durations are ncu's, with its cache flush before each kernel: cold-cache times, longer than the same kernel
inside the run (its inputs often in L2); use them to rank kernels and count launches, not as run times.
"""
import argparse
import collections
import csv
import re


def short(name):
    name = name.replace("(anonymous namespace)::", "").replace("<unnamed>::", "")
    name = re.sub(r"\(.*", "", name)
    out, depth = "", 0
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out += ch
    parts = out.replace("void ", "").split("::")
    return "::".join(parts[-2:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--from", dest="start", type=int)
    ap.add_argument("--count", type=int, default=60)
    a = ap.parse_args()
    with open(a.csv) as f:
        rows = list(csv.reader(line for line in f if line.startswith('"')))
    hdr, rows = rows[0], rows[1:]
    ik, iv, ig = hdr.index("Kernel Name"), hdr.index("Metric Value"), hdr.index("Grid Size")
    us = [float(r[iv].replace(",", "")) / 1e3 for r in rows]
    if a.start is not None:
        for i in range(a.start, min(len(rows), a.start + a.count)):
            print(f"{i:6d} {us[i]:8.1f} us  grid {rows[i][ig]:>14}  {short(rows[i][ik])}")
        return
    tot, cnt = collections.defaultdict(float), collections.Counter()
    for r, t in zip(rows, us):
        tot[short(r[ik])] += t
        cnt[short(r[ik])] += 1
    print(f"{len(rows)} kernels, {sum(us) / 1e3:.2f} ms")
    for k in sorted(tot, key=lambda k: -tot[k])[: a.top]:
        print(f"{tot[k]:10.1f} us {cnt[k]:6d} x {tot[k] / cnt[k]:7.2f} us  {k}")


if __name__ == "__main__":
    main()
