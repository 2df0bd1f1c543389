#!/usr/bin/env python3
"""CTest checks of `blockres plot` (miniapp/plot/test/CMakeLists.txt): the real binary on a result file
written by `blockres run`, a stored baseline, the sample suite reports beside this file, and bad input.

  check_plot.py results --blockres B --out DIR --result R.h5 --baseline BASE.h5
  check_plot.py suite   --blockres B --out DIR --report A.json --report B.json
  check_plot.py bad     --blockres B --out DIR --result R.h5 --report A.json

Every picture written must exist, be non-empty and not blank (a PNG: pixel values not all equal and
more than a few distinct colours; an SVG: an <svg> document); every bad input must end with exit
code 1 and exactly one line `error: ...` naming the file or option, never a Python traceback.
Exit code 0 when every check passes, 1 with one line per failed check otherwise.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

SYSTEM_PYTHON = "/usr/bin/python3"
NO_FALLBACK = "BLOCKRES_PLOT_NO_FALLBACK"

try:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.image as mpimg
except ImportError:
    # As blockres_plot.py does: a python3 without Debian's packages (pyenv, a venv) hands over to Debian's.
    if os.environ.get(NO_FALLBACK) != "1" and os.access(SYSTEM_PYTHON, os.X_OK) and \
            os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON):
        os.environ[NO_FALLBACK] = "1"
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
    print(f"check_plot: {sys.executable} cannot import numpy and matplotlib: install python3-matplotlib python3-numpy")
    sys.exit(1)

failures = []


def check(ok, what):
    print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)
    if not ok:
        failures.append(what)
    return ok


def blockres(b, args, env=None):
    """Runs `blockres plot ARGS`; (exit code, stdout, stderr)."""
    full_env = dict(os.environ)
    full_env.pop(NO_FALLBACK, None)  # blockres_plot.py decides about its own interpreter
    full_env.update(env or {})
    p = subprocess.run([b, "plot"] + args, capture_output=True, text=True, env=full_env, timeout=300)
    return p.returncode, p.stdout, p.stderr


def written(stdout):
    return [line[len("wrote "):] for line in stdout.splitlines() if line.startswith("wrote ")]


def check_picture(path):
    if not check(os.path.isfile(path) and os.path.getsize(path) > 0, f"{path}: exists, not empty"):
        return
    if path.endswith(".svg"):
        with open(path, encoding="utf-8") as f:
            head = f.read(4096)
        check("<svg" in head, f"{path}: an SVG document")
        return
    image = mpimg.imread(path)
    rgb = (np.asarray(image)[..., :3] * 255).round().astype(np.uint8).reshape(-1, 3)
    colours = len(np.unique(rgb, axis=0))
    check(image.ndim == 3 and image.shape[0] >= 200 and image.shape[1] >= 300,
          f"{path}: a picture of {image.shape[1]}x{image.shape[0]} pixels")
    check(rgb.min() != rgb.max() and colours > 16, f"{path}: not blank ({colours} distinct colours)")


def check_run(b, args, expected, env=None):
    """blockres plot ARGS must succeed, write every name in `expected` and only good pictures."""
    rc, out, err = blockres(b, args, env)
    shown = " ".join(args)
    check(rc == 0, f"blockres plot {shown}: exit code {rc}" + (f" ({err.strip()})" if rc else ""))
    check("Traceback" not in out + err, f"blockres plot {shown}: no Python traceback")
    files = written(out)
    names = {os.path.basename(f) for f in files}
    for name in expected:
        check(name in names, f"blockres plot {shown}: wrote {name}")
    for f in files:
        check_picture(f)
    return files, out


def check_error(b, args, expect, env=None, what=None):
    """blockres plot ARGS must fail: exit code 1, one line `error: ...` holding `expect`."""
    rc, out, err = blockres(b, args, env)
    lines = [line for line in (out + err).splitlines() if line.strip()]
    shown = what or " ".join(args)
    check(rc == 1, f"blockres plot {shown}: exit code 1 (got {rc})")
    check(len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0],
          f"blockres plot {shown}: one line 'error: ...{expect}...' (got {lines!r})")


def no_temporaries(directory):
    left = [f for f in os.listdir(directory) if f.endswith(".tmp")]
    check(not left, f"{directory}: no temporary files left ({left})")


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def results(a):
    out = os.path.join(a.out, "results")
    shutil.rmtree(out, ignore_errors=True)  # --output is created when missing
    r, base = stem(a.result), stem(a.baseline)
    pair = f"{r}_vs_{base}"
    # The run and a stored (layout version 2) baseline overlaid; default maps: pressure and sw on the top
    # and bottom layers (the run's grid is 10x10x3) at the last report row (the run has 4 reports + t = 0).
    files, _ = check_run(a.blockres, [a.result, a.baseline, "--output", out],
                         [f"{pair}_wells_rates.png", f"{pair}_wells_cumulative.png", f"{pair}_wells_bhp.png",
                          f"{r}_map_pressure_k1_step4.png", f"{r}_map_pressure_k3_step4.png",
                          f"{r}_map_sw_k1_step4.png", f"{r}_map_sw_k3_step4.png",
                          f"{base}_map_pressure_k1_step2.png", f"{base}_map_sw_k3_step2.png"])
    check(len(files) == 11, f"11 pictures written (got {len(files)})")
    no_temporaries(out)
    # Chosen field, layer and rows (negative from the end, a repeat drawn once), SVG.
    svg = os.path.join(a.out, "results_svg")
    shutil.rmtree(svg, ignore_errors=True)
    files, _ = check_run(a.blockres, [a.result, "--field", "sw", "--layer", "2", "--step", "0", "--step", "-1",
                                      "--step", "4", "--format", "svg", "--output", svg],
                         [f"{r}_wells_rates.svg", f"{r}_map_sw_k2_step0.svg", f"{r}_map_sw_k2_step4.svg"])
    check(len(files) == 5, f"5 SVG pictures written (got {len(files)})")
    # Inactive cells (NaN) are drawn blank: a copy of the run with a hole in every report row.
    import h5py

    holed = os.path.join(a.out, "holed.h5")
    shutil.copyfile(a.result, holed)
    with h5py.File(holed, "r+") as h:
        p = h["reports/pressure"]
        values = p[()]
        values[:, 33:67] = np.nan
        p[...] = values
    files, _ = check_run(a.blockres, [holed, "--field", "pressure", "--layer", "1", "--output", out],
                         ["holed_map_pressure_k1_step4.png"])
    image = mpimg.imread(os.path.join(out, "holed_map_pressure_k1_step4.png"))
    white = np.all(image[..., :3] > 0.99, axis=-1).mean()
    full = mpimg.imread(os.path.join(out, f"{r}_map_pressure_k1_step4.png"))
    white_full = np.all(full[..., :3] > 0.99, axis=-1).mean()
    check(white > white_full + 0.05, f"inactive cells blank: {white:.2f} of the map white, {white_full:.2f} without")


def suite(a):
    out = os.path.join(a.out, "suite")
    shutil.rmtree(out, ignore_errors=True)
    first, second = (stem(p) for p in a.report[:2])
    pair = f"{first}_vs_{second}"
    # "suite" in the stems: <stem>_<what>. The CPU report has no GPU, no baselines, no speedups.
    files, out_text = check_run(a.blockres, a.report + ["--output", out],
                                [f"{first}_bandwidth.png", f"{first}_speedup.png", f"{first}_applications.png",
                                 f"{second}_bandwidth.png", f"{second}_applications.png",
                                 f"{pair}_applications.png", f"{pair}_kernels.png"])
    check(f"{second}_speedup.png" not in {os.path.basename(f) for f in files},
          "no speedup picture for a report without baselines")
    check(any(line.startswith("skipped the speedup picture") and second in line for line in out_text.splitlines()),
          "one line says the speedup picture was skipped")
    no_temporaries(out)
    # Empty arrays and nulls: nothing to draw is said in one line per picture, exit code 0.
    with open(a.report[0], encoding="utf-8") as f:
        report = json.load(f)
    report["hardware"]["gpu"] = None
    report["kernels"], report["applications"] = [], []
    report["score"] = {"value": None, "unit": "cell-Newton-iterations/s", "cases": 0}
    empty = os.path.join(a.out, "empty_suite.json")
    with open(empty, "w", encoding="utf-8") as f:
        json.dump(report, f)
    files, out_text = check_run(a.blockres, [empty, "--output", out], [])
    check(not files, "an empty report writes no picture")
    check(sum(line.startswith("skipped") for line in out_text.splitlines()) == 2,
          "two 'skipped' lines for an empty report (kernels, applications)")


def bad(a):
    out = os.path.join(a.out, "bad")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    pictures = os.path.join(out, "pictures")
    missing = os.path.join(out, "no_such.h5")
    truncated = os.path.join(out, "truncated.h5")
    with open(a.result, "rb") as f:
        data = f.read()
    with open(truncated, "wb") as f:
        f.write(data[: len(data) // 2])
    text = os.path.join(out, "notes.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.write("not a result\n")
    other = os.path.join(out, "other.json")
    with open(other, "w", encoding="utf-8") as f:
        json.dump({"schema": "blockres-tuning-cache"}, f)
    cut = os.path.join(out, "cut.json")
    with open(a.report, encoding="utf-8") as f:
        report_text = f.read()
    with open(cut, "w", encoding="utf-8") as f:
        f.write(report_text[: len(report_text) // 2])

    check_error(a.blockres, [missing, "--output", pictures], f"{missing}: no such file")
    check_error(a.blockres, [truncated, "--output", pictures], f"{truncated}: truncated or damaged HDF5 file")
    check_error(a.blockres, [text, "--output", pictures], f"{text}: neither a blockres result file (HDF5) nor a "
                "bench suite report")
    check_error(a.blockres, [other, "--output", pictures], f"{other}: JSON, but not a bench suite report")
    check_error(a.blockres, [cut, "--output", pictures], f"{cut}: not valid JSON")
    check_error(a.blockres, [out, "--output", pictures], f"{out}: is a directory")
    # A bad file among good ones: nothing is drawn.
    check_error(a.blockres, [a.result, a.report, text, "--output", pictures], f"{text}: neither")
    check(not os.path.exists(pictures), "nothing written when one file is bad")
    # Options checked against the file.
    check_error(a.blockres, [a.result, "--layer", "4", "--output", pictures], "--layer 4: ")
    check_error(a.blockres, [a.result, "--step", "9", "--output", pictures], "--step 9: ")
    check_error(a.blockres, [a.result, "--field", "presure", "--output", pictures], "--field presure: no such cell field")
    check_error(a.blockres, [a.result, "--output", a.result], f"--output {a.result}: exists and is not a directory")
    # The command line's own checks (CLI11).
    check_error(a.blockres, [a.result, "--format", "jpg"], "--format")
    check_error(a.blockres, [a.result, "--layer", "0"], "--layer: layers are numbered from k = 1")
    # No python3, and a python3 without the modules: the Debian packages are named.
    check_error(a.blockres, [a.result, "--output", pictures], "install the Debian packages python3 ",
                env={"PATH": "/nonexistent", "BLOCKRES_PYTHON": ""}, what="(no python3 on PATH)")
    wrapper = os.path.join(out, "python3_without_site")
    with open(wrapper, "w", encoding="utf-8") as f:  # -S: no site-packages, hence no matplotlib, numpy, h5py
        f.write(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    os.chmod(wrapper, 0o755)
    check_error(a.blockres, [a.result, "--output", pictures], "python3-matplotlib",
                env={"BLOCKRES_PYTHON": wrapper, NO_FALLBACK: "1"}, what="(python3 without matplotlib)")
    check_error(a.blockres, [a.result, "--output", pictures], "BLOCKRES_PLOT_SCRIPT",
                env={"BLOCKRES_PLOT_SCRIPT": missing}, what="(script missing)")
    check(not os.path.exists(pictures), "nothing written by any bad call")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("results", "suite", "bad"))
    p.add_argument("--blockres", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--result")
    p.add_argument("--baseline")
    p.add_argument("--report", action="append", default=[])
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.mode == "results":
        results(a)
    elif a.mode == "suite":
        suite(a)
    else:
        a.report = a.report[0]
        bad(a)
    if failures:
        print(f"check_plot {a.mode}: {len(failures)} check{'s' if len(failures) > 1 else ''} failed")
        return 1
    print(f"check_plot {a.mode}: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
