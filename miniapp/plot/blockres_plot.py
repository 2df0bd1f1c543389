#!/usr/bin/env python3
"""blockres plot: pictures of blockres result files (HDF5) and bench suite reports (JSON).

Run by `blockres plot FILE... [--output DIR] [--format png|svg] [--field NAME]... [--layer K]...
[--step I]...` (miniapp/plot/plot_cli.cpp), which parses the command line and runs this script with
python3; it also runs on its own with the same arguments. Each file's kind comes from its content:

- a result file (HDF5, verification/hdf5_layout.md, layout versions 1 to 4): the wells' rates,
  cumulatives (the rates integrated over the accepted time steps of /steps) and bottom-hole pressures
  against time, several files overlaid in one figure per quantity group; maps of cell fields on
  layers k at report rows, one picture per file, field, layer and row.
- a bench suite report (JSON, "schema": "blockres-bench-suite"): per report the fraction of the
  bandwidth ceilings against the block size, the speedup over the vendor baseline, and the
  applications' figures of merit; with several reports, the machines side by side.

Pictures are written to DIR (default plots/) atomically (a temporary name in DIR, then a rename), one
line per file written; every error is one line `error: ...` on stderr and exit code 1.
Needs matplotlib, numpy and h5py (Debian: python3-matplotlib python3-numpy python3-h5py). An
interpreter without them (a pyenv or virtual environment first on PATH) hands over to Debian's
/usr/bin/python3 when that one exists; BLOCKRES_PLOT_NO_FALLBACK=1 turns that off.
"""

import argparse
import json
import math
import os
import sys
import tempfile
import warnings

# ---- the Python modules, and the Debian packages that hold them -------------------------------------

MODULES = (("numpy", "python3-numpy"), ("matplotlib", "python3-matplotlib"), ("h5py", "python3-h5py"))
SYSTEM_PYTHON = "/usr/bin/python3"
NO_FALLBACK = "BLOCKRES_PLOT_NO_FALLBACK"


def import_modules():
    """Imports numpy, matplotlib (Agg) and h5py, or hands over to Debian's python3, or fails in one line."""
    import importlib
    import logging

    # matplotlib's notes at import (a temporary cache folder when $HOME is not writable, the font cache
    # being built) are not ours to print: the output is one line per picture, or one error line.
    logging.getLogger("matplotlib").setLevel(logging.ERROR)
    missing = []
    for module, package in MODULES:
        try:
            importlib.import_module(module)
        except Exception:  # ImportError, or a broken installation raising something else
            missing.append((module, package))
    if not missing:
        return
    here = os.path.realpath(sys.executable or "")
    if (os.environ.get(NO_FALLBACK) != "1" and os.access(SYSTEM_PYTHON, os.X_OK)
            and here != os.path.realpath(SYSTEM_PYTHON)):
        os.environ[NO_FALLBACK] = "1"  # once: Debian's python3 reports what it lacks itself
        try:
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
        except OSError:
            pass
    modules = ", ".join(m for m, _ in missing)
    packages = " ".join(p for _, p in missing)
    print(f"error: blockres plot: {sys.executable or 'python3'} cannot import {modules}: install the Debian "
          f"package{'s' if len(missing) > 1 else ''} {packages} (sudo apt-get install {packages})",
          file=sys.stderr)
    sys.exit(1)


class PlotError(Exception):
    """A one-line error for the user: names the file or the option."""


class About:
    """Turns any unexpected exception while handling `what` (a file) into a PlotError naming it."""

    def __init__(self, what):
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if value is None or isinstance(value, (PlotError, KeyboardInterrupt, SystemExit)):
            return False
        text = str(value).strip() or kind.__name__
        raise PlotError(f"{self.what}: {text}") from None


# ---- small helpers -----------------------------------------------------------------------------------

def text(value):
    """An HDF5 string (bytes or str, maybe a 0-d array) as str."""
    if hasattr(value, "shape") and getattr(value, "shape", None) == ():
        value = value[()]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def number(value):
    """A finite JSON number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def safe_name(name):
    """A file-name part: letters, digits and _ . + - only."""
    out = "".join(c if c.isalnum() or c in "_.+-" else "_" for c in name)
    return out or "_"


def unique_labels(paths):
    """File stems for picture names; stems that repeat get their folder's name in front, then a number."""
    stems = [safe_name(os.path.splitext(os.path.basename(p))[0]) for p in paths]
    labels = []
    for p, s in zip(paths, stems):
        if stems.count(s) > 1:
            parent = os.path.basename(os.path.dirname(os.path.abspath(p)))
            s = f"{safe_name(parent)}_{s}" if parent else s
        labels.append(s)
    seen = {}
    for i, s in enumerate(labels):
        if labels.count(s) > 1:
            seen[s] = seen.get(s, 0) + 1
            labels[i] = f"{s}_{seen[s]}"
    return labels


def joined_label(labels):
    """The name part of a picture of several files: a_vs_b, or a_vs_3_more when that is long."""
    joined = "_vs_".join(labels)
    return joined if len(labels) <= 3 and len(joined) <= 120 else f"{labels[0][:100]}_vs_{len(labels) - 1}_more"


def short_path(path):
    """A file as a legend names it: as given, or its last two parts when that is long."""
    if len(path) <= 48:
        return path
    parts = os.path.normpath(path).split(os.sep)
    return os.path.join("...", *parts[-2:])


def display_units(units):
    return f" [{units}]" if units else ""


def log_note(line):
    print(line, flush=True)


LINESTYLES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3))]


# ---- detecting the kind of a file --------------------------------------------------------------------

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
SUITE_SCHEMA = "blockres-bench-suite"


def detect(path):
    """('result', None) for an HDF5 file, ('suite', dict) for a suite report; else a PlotError."""
    if not os.path.lexists(path):
        raise PlotError(f"{path}: no such file")
    if os.path.isdir(path):
        raise PlotError(f"{path}: is a directory, not a result file or suite report")
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            size = os.fstat(f.fileno()).st_size
            if head == HDF5_SIGNATURE:
                return "result", None
            offset = 512  # HDF5 allows a user block of 512, 1024, 2048, ... bytes in front
            while offset + 8 <= size and offset <= (1 << 30):
                f.seek(offset)
                if f.read(8) == HDF5_SIGNATURE:
                    return "result", None
                offset *= 2
            f.seek(0)
            data = f.read(64 << 20) if size <= (64 << 20) else b""
    except OSError as e:
        raise PlotError(f"{path}: cannot read: {e.strerror or e}") from None
    if size == 0:
        raise PlotError(f"{path}: empty file: neither a blockres result file (HDF5) nor a bench suite report (JSON)")
    neither = (f"{path}: neither a blockres result file (HDF5) nor a bench suite report "
               f"(JSON with \"schema\": \"{SUITE_SCHEMA}\")")
    try:
        content = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PlotError(neither) from None
    if not content.lstrip().startswith("{"):
        raise PlotError(neither)
    try:
        report = json.loads(content)
    except json.JSONDecodeError as e:
        raise PlotError(f"{path}: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}; truncated?)") from None
    except RecursionError:
        raise PlotError(f"{path}: JSON nested too deeply") from None
    schema = report.get("schema") if isinstance(report, dict) else None
    if schema != SUITE_SCHEMA:
        got = f"its \"schema\" is {json.dumps(schema)}" if schema is not None else "it has no \"schema\""
        raise PlotError(f"{path}: JSON, but not a bench suite report ({got}; expected \"{SUITE_SCHEMA}\")")
    return "suite", report


# ---- result files ------------------------------------------------------------------------------------

OLDEST_LAYOUT, NEWEST_LAYOUT = 1, 4


class Result:
    """What the pictures need of one result file; the cell fields are read row by row when drawn."""

    def __init__(self, path, label):
        import h5py
        import numpy as np

        self.path, self.label = path, label
        try:
            self.h5 = h5py.File(path, "r")
        except OSError as e:
            raise PlotError(f"{path}: truncated or damaged HDF5 file ({str(e).strip()})") from None
        h = self.h5
        with About(path):
            if "jacobian" in h and "reports" not in h:
                raise PlotError(f"{path}: a Jacobian file (blockres run --write-jacobian), not a result file")
            if "layout_version" not in h.attrs:
                if "reports" not in h:
                    raise PlotError(f"{path}: an HDF5 file, but not a blockres result file (no /reports, no layout_version)")
                self.version = 1
            else:
                self.version = int(np.asarray(h.attrs["layout_version"]).reshape(-1)[0])
            if not OLDEST_LAYOUT <= self.version <= NEWEST_LAYOUT:
                raise PlotError(f"{path}: layout_version {self.version}: blockres plot reads versions "
                                f"{OLDEST_LAYOUT} to {NEWEST_LAYOUT} (verification/hdf5_layout.md)")
            for group in ("grid", "reports", "steps", "wells"):
                if group not in h:
                    raise PlotError(f"{path}: not a blockres result file: no /{group}")
            grid = h["grid"]
            self.nx, self.ny, self.nz = (int(np.asarray(grid.attrs[a]).reshape(-1)[0]) for a in ("nx", "ny", "nz"))
            self.n = self.nx * self.ny * self.nz
            self.dx, self.dy = (self.spacing(grid, name, count) for name, count in (("dx", self.nx), ("dy", self.ny)))

            reports = h["reports"]
            self.report_time = self.series(reports, "time")
            self.time_units = self.units(reports["time"]) or "day"
            if "fields" in reports:
                self.fields = [text(s) for s in np.asarray(reports["fields"][()]).reshape(-1)]
            else:  # versions 1 and 2: oil_water's fixed names
                self.fields = [name for name in ("pressure", "sw") if name in reports]
            for name in self.fields:
                if name not in reports:
                    raise PlotError(f"{path}: /reports/fields names '{name}' but there is no /reports/{name}")
            self.field_units = {name: self.units(reports[name]) for name in self.fields}

            steps = h["steps"]
            self.step_time = self.series(steps, "time")
            self.step_dt = self.series(steps, "dt") if "dt" in steps else np.diff(np.concatenate([[0.0], self.step_time]))
            wells = h["wells"]
            self.well_names = [text(s) for s in np.asarray(wells["names"][()]).reshape(-1)] if "names" in wells else []
            self.well_types = ([text(s) for s in np.asarray(wells["type"][()]).reshape(-1)]
                               if "type" in wells else [""] * len(self.well_names))
            if "rates" in wells:
                self.rate_names = [text(s) for s in np.asarray(wells["rates"][()]).reshape(-1)]
            else:
                self.rate_names = [name for name in ("water_rate", "oil_rate") if name in wells]
            w = len(self.well_names)
            self.rates, self.rate_units = {}, {}
            for name in self.rate_names:
                if name not in wells:
                    raise PlotError(f"{path}: /wells/rates names '{name}' but there is no /wells/{name}")
                self.rates[name] = self.per_well(wells, name, w)
                self.rate_units[name] = self.units(wells[name]).split(",")[0].strip()
            self.bhp = self.per_well(wells, "bhp", w) if "bhp" in wells else None
            self.bhp_units = self.units(wells["bhp"]) if "bhp" in wells else "bar"
            self.well_cells = self.read_well_cells()

    def close(self):
        self.h5.close()

    def series(self, group, name):
        import numpy as np

        if name not in group:
            raise PlotError(f"{self.path}: no dataset {group.name}/{name}")
        return np.asarray(group[name][()], dtype=float).reshape(-1)

    def per_well(self, group, name, w):
        import numpy as np

        a = np.asarray(group[name][()], dtype=float)
        if a.ndim == 1:
            a = a.reshape(-1, 1)  # version 3: a one-well series is 1-D
        if a.shape[0] != len(self.step_time):
            raise PlotError(f"{self.path}: {group.name}/{name} has {a.shape[0]} rows, /steps/time {len(self.step_time)}")
        return a[:, :w]

    @staticmethod
    def units(dataset):
        return text(dataset.attrs.get("units", ""))

    def spacing(self, grid, name, count):
        import numpy as np

        if name in grid:
            a = np.asarray(grid[name][()], dtype=float).reshape(-1)
            if len(a) == count and np.all(np.isfinite(a)) and np.all(a > 0):
                return a
        return np.ones(count)

    def read_well_cells(self):
        """{well name: (i, j, k_top, k_bottom)} from the resolved deck, for the map markers (empty if unknown)."""
        try:
            import tomllib
        except ImportError:  # Python < 3.11
            return {}
        try:
            deck = tomllib.loads(text(self.h5["provenance/resolved_deck"][()]))
            cells = {}
            for well in deck.get("wells", []):
                cells[str(well["name"])] = (int(well["i"]), int(well["j"]), int(well.get("k_top", 1)),
                                            int(well.get("k_bottom", self.nz)))
            return cells
        except Exception:
            return {}

    def field_row(self, name, row):
        import numpy as np

        with About(f"{self.path}: /reports/{name}"):
            d = self.h5["reports"][name]
            a = np.asarray(d[row] if d.ndim == 2 else d[row:row + 1], dtype=float).reshape(-1)
        if a.size != self.n:
            raise PlotError(f"{self.path}: /reports/{name} row {row} has {a.size} values, the grid {self.n} cells")
        return a

    def default_fields(self):
        chosen = ["pressure"] if "pressure" in self.fields else self.fields[:1]
        saturation = [f for f in self.fields if f in ("sw", "so", "sg")]
        fraction = [f for f in self.fields if f.startswith("x_")]
        second = (saturation or fraction)[:1]
        return chosen + [f for f in second if f not in chosen]


# ---- pictures: writing --------------------------------------------------------------------------------

class Output:
    def __init__(self, directory, fmt):
        self.directory, self.fmt = directory, fmt
        if os.path.exists(directory) and not os.path.isdir(directory):
            raise PlotError(f"--output {directory}: exists and is not a directory")
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise PlotError(f"--output {directory}: cannot create the directory: {e.strerror or e}") from None
        self.written = []

    def save(self, fig, name):
        import matplotlib.pyplot as plt

        final = os.path.join(self.directory, f"{name}.{self.fmt}")
        tmp = None
        try:
            if os.path.isdir(final):
                raise PlotError(f"{final}: is a directory; cannot write the picture there")
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=f".{self.fmt}.tmp", dir=self.directory)
            with os.fdopen(fd, "wb") as f:
                fig.savefig(f, format=self.fmt, dpi=100)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 -> what open() would give
            os.replace(tmp, final)
            tmp = None
        except OSError as e:
            raise PlotError(f"{final}: cannot write: {e.strerror or e}") from None
        finally:
            plt.close(fig)
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        self.written.append(final)
        print(f"wrote {final}", flush=True)


def new_figure(width, height, rows=1, cols=1, **kw):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(rows, cols, figsize=(width, height), squeeze=False, **kw)
    return fig, axes.reshape(-1)


# ---- pictures: result files ---------------------------------------------------------------------------

def short_rate(name):
    return name[:-5] if name.endswith("_rate") and len(name) > 5 else name


def cumulative_units(units):
    for suffix in ("/day", "/d"):
        if units.endswith(suffix):
            return units[: -len(suffix)].strip() or "1"
    return f"{units}*day" if units else "day"


def step_edges(r):
    """The accepted steps' time edges: the start of the first step, then every step's end."""
    import numpy as np

    return np.concatenate([[r.step_time[0] - r.step_dt[0]], r.step_time])


def files_with_well(results, w):
    """(result, the well's column in it, step edges) for every result that has well w and steps."""
    for r in results:
        if w in r.well_names and len(r.step_time) > 0:
            yield r, r.well_names.index(w), step_edges(r)


def plot_wells(results, out):
    """Rates, cumulatives and BHP against time, the files overlaid (linestyle = file)."""
    import numpy as np
    from matplotlib.lines import Line2D

    names = []
    for r in results:
        names += [w for w in r.well_names if w not in names]
    label = joined_label([r.label for r in results])
    if not names:
        log_note(f"skipped the well pictures of {', '.join(r.path for r in results)}: no wells")
        return
    rate_names = []
    for r in results:
        rate_names += [q for q in r.rate_names if q not in rate_names]
    colours = {q: f"C{i % 10}" for i, q in enumerate(rate_names)}
    styles = {r.path: LINESTYLES[i % len(LINESTYLES)] for i, r in enumerate(results)}
    several = len(results) > 1
    files_legend = [Line2D([], [], color="0.2", linestyle=styles[r.path], label=short_path(r.path)) for r in results]
    one_file = "" if several else f"{short_path(results[0].path)}: "

    def files_legend_height(fig):  # the figure legend of the files, as a fraction of the figure's height
        return (0.55 + 0.2 * ((len(files_legend) + 2) // 3)) / fig.get_figheight()

    def well_grid():
        cols = 1 if len(names) == 1 else 2
        rows = (len(names) + cols - 1) // cols
        fig, axes = new_figure(6.0 * cols, 3.4 * rows + 1.0, rows, cols, sharex=True)
        for ax in axes[len(names):]:
            ax.set_visible(False)
        return fig, axes

    def well_type(r, w):
        i = r.well_names.index(w)
        return r.well_types[i] if i < len(r.well_types) else ""

    def finish(fig, axes, ylabel, title, quantity_handles):
        for ax in axes[: len(names)]:
            ax.grid(True, alpha=0.3)
            ax.axhline(0.0, color="0.5", linewidth=0.6)
        for ax in axes[max(0, len(names) - 2): len(names)]:
            ax.set_xlabel(f"time [{results[0].time_units}]")
        for i in range(0, len(names), 2 if len(names) > 1 else 1):
            axes[i].set_ylabel(ylabel)
        if quantity_handles:
            axes[0].legend(handles=quantity_handles, fontsize="small", ncol=max(1, (len(quantity_handles) + 9) // 10),
                           loc="best")
        if several:
            fig.legend(handles=files_legend, loc="lower center", ncol=min(len(files_legend), 3), fontsize="small",
                       title="files (line style)", title_fontsize="small")
        fig.suptitle(title, fontsize="medium")
        fig.tight_layout(rect=(0, files_legend_height(fig) if several else 0, 1, 1))

    units = sorted({r.rate_units[q] for r in results for q in r.rate_names})
    units_text = ", ".join(u for u in units if u)

    # Rates: the value of every accepted step over that step (implicit Euler), as stairs.
    fig, axes = well_grid()
    for ax, w in zip(axes, names):
        kinds = sorted({well_type(r, w) for r in results if w in r.well_names} - {""})
        ax.set_title(f"{w}" + (f" ({', '.join(kinds)})" if kinds else ""), fontsize="medium")
        for r, col, edges in files_with_well(results, w):
            for q in r.rate_names:
                ax.stairs(r.rates[q][:, col], edges, baseline=None, color=colours[q], linestyle=styles[r.path])
    handles = [Line2D([], [], color=colours[q], label=short_rate(q)) for q in rate_names]
    finish(fig, axes, f"rate [{units_text}]",
           f"{one_file}well rates per accepted time step (/steps), positive into the reservoir", handles)
    out.save(fig, f"{label}_wells_rates")

    # Cumulatives: sum of rate * dt over the accepted steps of /steps.
    fig, axes = well_grid()
    for ax, w in zip(axes, names):
        ax.set_title(w, fontsize="medium")
        for r, col, t in files_with_well(results, w):
            for q in r.rate_names:
                total = np.concatenate([[0.0], np.cumsum(np.nan_to_num(r.rates[q][:, col]) * r.step_dt)])
                ax.plot(t, total, color=colours[q], linestyle=styles[r.path])
    cum_units = ", ".join(sorted({cumulative_units(u) for u in units if u}))
    finish(fig, axes, f"cumulative [{cum_units}]",
           f"{one_file}cumulative well volumes: rates x dt summed over the time steps of /steps "
           "(positive into the reservoir)", handles)
    out.save(fig, f"{label}_wells_cumulative")

    # Bottom-hole pressure: one axes, colour = well, linestyle = file.
    if all(r.bhp is None for r in results):
        log_note(f"skipped the BHP picture of {', '.join(r.path for r in results)}: no /wells/bhp")
        return
    fig, axes = new_figure(8.0, 4.8)
    ax = axes[0]
    well_colours = {w: f"C{i % 10}" for i, w in enumerate(names)}
    for r in results:
        if r.bhp is None or len(r.step_time) == 0:
            continue
        edges = step_edges(r)
        for col, w in enumerate(r.well_names):
            ax.stairs(r.bhp[:, col], edges, baseline=None, color=well_colours[w], linestyle=styles[r.path])
    ax.set_xlabel(f"time [{results[0].time_units}]")
    ax.set_ylabel(f"bottom-hole pressure [{results[0].bhp_units}]")
    ax.grid(True, alpha=0.3)
    ax.legend(handles=[Line2D([], [], color=well_colours[w], label=w) for w in names], fontsize="small",
              title="wells", title_fontsize="small", loc="best")
    if several:
        fig.legend(handles=files_legend, loc="lower center", ncol=min(len(files_legend), 3), fontsize="small",
                   title="files (line style)", title_fontsize="small")
    fig.suptitle(f"{one_file}bottom-hole pressure per accepted time step (/steps)", fontsize="medium")
    fig.tight_layout(rect=(0, files_legend_height(fig) if several else 0, 1, 1))
    out.save(fig, f"{label}_wells_bhp")


def resolve_maps(results, fields, layers, steps):
    """[(result, fields, layers, rows)] after checking every option against every file."""
    plan = []
    if fields:
        for f in fields:
            if not any(f in r.fields for r in results):
                listing = "; ".join(f"{r.path}: {', '.join(r.fields) or 'none'}" for r in results)
                raise PlotError(f"--field {f}: no such cell field (fields: {listing})")
    for r in results:
        if fields:
            mine = []
            for f in fields:
                if f in r.fields:
                    if f not in mine:
                        mine.append(f)
                else:
                    log_note(f"skipped --field {f} for {r.path}: no such field there (fields: {', '.join(r.fields)})")
        else:
            mine = r.default_fields()
        ks = []
        for k in (layers or [1, r.nz]):
            if not 1 <= k <= r.nz:
                raise PlotError(f"--layer {k}: {r.path} has layers k = 1 to {r.nz}")
            if k not in ks:
                ks.append(k)
        rows = []
        count = len(r.report_time)
        if count == 0:
            raise PlotError(f"{r.path}: /reports/time has no rows")
        for s in (steps or [-1]):
            if not -count <= s < count:
                raise PlotError(f"--step {s}: {r.path} has report rows 0 to {count - 1} (-{count} to -1 from the end)")
            row = s % count
            if row not in rows:
                rows.append(row)
        plan.append((r, mine, ks, rows))
    return plan


def plot_maps(r, fields, layers, rows, out):
    import matplotlib.pyplot as plt
    import numpy as np

    x = np.concatenate([[0.0], np.cumsum(r.dx)])
    y = np.concatenate([[0.0], np.cumsum(r.dy)])
    extent_ratio = (x[-1] / y[-1]) if y[-1] > 0 else 1.0
    aspect = "equal" if 1 / 8 <= extent_ratio <= 8 else "auto"
    width, height = (7.2, 5.8) if aspect == "equal" or extent_ratio < 1 else (9.0, 3.4)
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad((1, 1, 1, 0))  # inactive cells (NaN): blank
    for field in fields:
        units = r.field_units.get(field, "")
        layer_rows = {}
        for row in rows:
            values = r.field_row(field, row).reshape(r.nz, r.ny, r.nx)
            for k in layers:
                layer_rows[(row, k)] = values[k - 1]
        finite = [v[np.isfinite(v)] for v in layer_rows.values()]
        finite = np.concatenate(finite) if finite else np.array([])
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if hi <= lo:
            pad = abs(lo) * 1e-6 or 1e-6
            lo, hi = lo - pad, hi + pad
        for row in rows:
            for k in layers:
                values = layer_rows[(row, k)]
                fig, axes = new_figure(width, height)
                ax = axes[0]
                mesh = ax.pcolormesh(x, y, np.ma.masked_invalid(values), cmap=cmap, vmin=lo, vmax=hi, shading="flat")
                ax.set_aspect(aspect)
                ax.set_xlim(x[0], x[-1])
                ax.set_ylim(y[0], y[-1])
                ax.set_xlabel("x [m] (i increasing)")
                ax.set_ylabel("y [m] (j increasing)")
                bar = fig.colorbar(mesh, ax=ax)
                bar.set_label(f"{field}{display_units(units)}")
                for name, (i, j, k_top, k_bottom) in r.well_cells.items():
                    if 1 <= i <= r.nx and 1 <= j <= r.ny:
                        inside = k_top <= k <= k_bottom
                        ax.plot([(x[i - 1] + x[i]) / 2], [(y[j - 1] + y[j]) / 2], marker="o", markersize=6,
                                markerfacecolor="white" if inside else "none", markeredgecolor="black")
                        right, top = i > (r.nx + 1) / 2, j > (r.ny + 1) / 2  # the name towards the middle
                        ax.annotate(name, ((x[i - 1] + x[i]) / 2, (y[j - 1] + y[j]) / 2), textcoords="offset points",
                                    xytext=(-6 if right else 6, -6 if top else 6), ha="right" if right else "left",
                                    va="top" if top else "bottom", fontsize="small",
                                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.7))
                where = " (top)" if k == 1 and r.nz > 1 else " (bottom)" if k == r.nz and r.nz > 1 else ""
                blank = (", every cell inactive" if np.isnan(values).all()
                         else ", blank: inactive cells" if np.isnan(values).any() else "")
                ax.set_title(f"{short_path(r.path)}: {field}{display_units(units)}\nlayer k = {k} of {r.nz}{where}, report row "
                             f"{row} of {len(r.report_time) - 1} (t = {r.report_time[row]:g} {r.time_units}){blank}",
                             fontsize="medium")
                fig.tight_layout()
                out.save(fig, f"{r.label}_map_{safe_name(field)}_k{k}_step{row}")


# ---- bench suite reports -------------------------------------------------------------------------------

class Suite:
    """The fields of a suite report that the pictures use (every other field is ignored)."""

    def __init__(self, path, label, report):
        self.path, self.label = path, label
        hardware = report.get("hardware") if isinstance(report.get("hardware"), dict) else {}
        gpu = hardware.get("gpu") if isinstance(hardware.get("gpu"), dict) else None
        cpu = hardware.get("cpu") if isinstance(hardware.get("cpu"), dict) else None
        parameters = report.get("parameters") if isinstance(report.get("parameters"), dict) else {}
        backend = parameters.get("backend")
        gpu_name = gpu.get("name") if gpu and isinstance(gpu.get("name"), str) else None
        cpu_name = cpu.get("model") if cpu and isinstance(cpu.get("model"), str) else None
        if backend == "cpu" and cpu_name:
            self.hardware = cpu_name
        else:
            self.hardware = gpu_name or cpu_name or "unknown hardware"
        self.backend = backend if isinstance(backend, str) else ""
        self.size = parameters.get("size") if isinstance(parameters.get("size"), str) else ""
        ceilings = report.get("ceilings") if isinstance(report.get("ceilings"), dict) else {}
        self.ceilings = {k: number(ceilings.get(k)) for k in ("copy_gbs", "read_gbs", "fp64_gflops")}

        self.kernels, dropped = [], 0
        for row in self.array(report, "kernels"):
            kernel, size = row.get("kernel") if isinstance(row, dict) else None, None
            if isinstance(row, dict):
                size = row.get("block_size")
            if not isinstance(kernel, str) or isinstance(size, bool) or not isinstance(size, int) or size < 1:
                dropped += 1
                continue
            baseline = row.get("baseline") if isinstance(row.get("baseline"), dict) else None
            check = row.get("check") if isinstance(row.get("check"), dict) else None
            self.kernels.append({
                "kernel": kernel,
                "variant": row.get("variant") if isinstance(row.get("variant"), str) else "",
                "block_size": size,
                "gbs": number(row.get("gbs")),
                "fraction": number(row.get("fraction")),
                "fraction_of": row.get("fraction_of") if isinstance(row.get("fraction_of"), str) else "",
                "baseline": baseline.get("name") if baseline and isinstance(baseline.get("name"), str) else None,
                "speedup": number(row.get("speedup")),
                "failed": bool(check) and check.get("pass") is False,
            })
        if dropped:
            log_note(f"{path}: ignored {dropped} kernel row{'s' if dropped > 1 else ''} without a kernel name "
                     "and a block size")

        self.applications, dropped = [], 0
        for row in self.array(report, "applications"):
            fom = row.get("figure_of_merit") if isinstance(row, dict) else None
            case = row.get("case") if isinstance(row, dict) else None
            value = number(fom.get("value")) if isinstance(fom, dict) else None
            if not isinstance(case, str) or value is None:
                dropped += 1
                continue
            self.applications.append({"case": case, "value": value,
                                      "unit": fom.get("unit") if isinstance(fom.get("unit"), str) else ""})
        if dropped:
            log_note(f"{path}: ignored {dropped} application row{'s' if dropped > 1 else ''} without a case "
                     "and a figure of merit")
        score = report.get("score") if isinstance(report.get("score"), dict) else {}
        self.score = number(score.get("value"))
        self.score_unit = score.get("unit") if isinstance(score.get("unit"), str) else ""
        self.score_cases = score.get("cases") if isinstance(score.get("cases"), int) else None
        validity = report.get("validity") if isinstance(report.get("validity"), dict) else {}
        self.verdict = validity.get("verdict") if isinstance(validity.get("verdict"), str) else ""
        reasons = validity.get("reasons") if isinstance(validity.get("reasons"), list) else []
        self.reasons = [r for r in reasons if isinstance(r, str)]

    def array(self, report, key):
        value = report.get(key, [])
        if value is None:
            return []
        if not isinstance(value, list):
            raise PlotError(f"{self.path}: \"{key}\" is {type(value).__name__}, not an array")
        return value

    def title(self, topic):
        """A suite picture's title: hardware, backend, size, file and verdict; the topic; why INVALID."""
        run = ", ".join(x for x in (self.backend, self.size and f"size {self.size}") if x)
        first = f"{self.hardware}{f' ({run})' if run else ''}: {os.path.basename(self.path)}"
        if self.verdict and self.verdict != "INVALID":
            first += f" - {self.verdict}"
        lines = [clip_title(first), clip_title(topic)]
        if self.verdict == "INVALID":
            lines.append(clip_title("INVALID" + (f": {'; '.join(self.reasons)}" if self.reasons else "")))
        return "\n".join(lines)

    def score_text(self):
        if self.score is None:
            return "no score"
        cases = f" over {self.score_cases} case{'s' if self.score_cases != 1 else ''}" if self.score_cases else ""
        return f"score {self.score:.4g} {self.score_unit}{cases}"

    def validity_text(self):
        if self.verdict == "INVALID":
            why = "; ".join(self.reasons)
            return clip_title(f" - INVALID{': ' + why if why else ''}", 70)
        return f" - {self.verdict}" if self.verdict else ""


def suite_name(label, what):
    """<label>_suite_<what>, or <label>_<what> when the label says "suite" already."""
    return f"{label}_{what}" if "suite" in label else f"{label}_suite_{what}"


def series_label(kernel, variant):
    return f"{kernel} {variant}".strip()


def block_size_axis(ax, sizes):
    from matplotlib.ticker import FixedLocator, NullLocator

    sizes = sorted(set(sizes))
    if len(sizes) > 1 and sizes[-1] / sizes[0] >= 8:
        ax.set_xscale("log", base=2)
    if len(sizes) <= 16:
        ax.xaxis.set_major_locator(FixedLocator(sizes))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([str(s) for s in sizes])
    ax.set_xlabel("block size")


def clip_title(s, limit=110):
    return s if len(s) <= limit else s[: limit - 3] + "..."


MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]


def series_style(i):
    """Colour, marker and line style of the i-th series: ten colours; past ten, another marker and a dashed
    line (series i and i + 10 share a colour, never a marker and a line style)."""
    return {"color": f"C{i % 10}", "marker": MARKERS[(i + 3 * (i // 10)) % len(MARKERS)],
            "linestyle": LINESTYLES[(i // 10) % 4]}


def kernel_panels(series, value, ylabel, reference, title, log=False):
    """One picture of per-kernel values: a line panel over the block size for the series measured at
    several block sizes (the batched dense kernels, BSRMV), and beside it a bar panel for the series
    measured at one block size (the preconditioners, AMG), one bar each, labelled with the block size.
    `series` maps a label to its rows; `value` reads a row's value. Returns (figure, failed)."""
    from matplotlib.lines import Line2D

    multi = {k: v for k, v in series.items() if len({p["block_size"] for p in v}) > 1}
    single = {k: v for k, v in series.items() if k not in multi}
    cols = (1 if multi else 0) + (1 if single else 0)
    widths = [3.0, 1.6][:cols] if cols == 2 else [1.0]
    fig, axes = new_figure(15.0 if cols == 2 else 12.0, 6.0, 1, cols, gridspec_kw={"width_ratios": widths})
    failed = False
    handles = []
    if multi:
        ax = axes[0]
        for i, (label, points) in enumerate(multi.items()):
            points = sorted(points, key=lambda p: p["block_size"])
            style = series_style(i)
            ax.plot([p["block_size"] for p in points], [value(p) for p in points], markersize=5, label=label,
                    **style)
            bad = [(p["block_size"], value(p)) for p in points if p["failed"]]
            if bad:
                failed = True
                ax.plot(*zip(*bad), linestyle="none", marker="x", markersize=10, color="red")
        ax.axhline(reference, color="0.4", linestyle="--", linewidth=0.8)
        block_size_axis(ax, [p["block_size"] for v in multi.values() for p in v])
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        handles, _ = ax.get_legend_handles_labels()
        if failed:
            handles.append(Line2D([], [], linestyle="none", marker="x", color="red", label="check failed"))
        ax.legend(handles=handles, fontsize="small", loc="best", framealpha=0.85)
    if single:
        ax = axes[-1]
        labels, values, colours, bad = [], [], [], []
        for i, (label, points) in enumerate(single.items()):
            p = points[0]
            labels.append(f"{label} (bs {p['block_size']})")
            values.append(value(p))
            colours.append("red" if p["failed"] else f"C{i % 10}")
            bad.append(p["failed"])
        ys = list(range(len(labels)))[::-1]
        bars = ax.barh(ys, values, color=colours, alpha=0.85)
        for bar, v, b in zip(bars, values, bad):
            ax.annotate(f"{v:.3g}" + (" (check failed)" if b else ""), (bar.get_width(), bar.get_y() +
                        bar.get_height() / 2), textcoords="offset points", xytext=(3, 0), va="center",
                        fontsize="x-small")
        ax.set_yticks(ys)
        ax.set_yticklabels(labels, fontsize="small")
        ax.axvline(reference, color="0.4", linestyle="--", linewidth=0.8)
        if log:
            ax.set_xscale("log")
        ax.set_xlabel(ylabel if not multi else f"{ylabel.split(' (')[0]} (kernels at one block size)")
        ax.grid(True, axis="x", alpha=0.3)
        failed = failed or any(bad)
        right = max(values + [reference])
        if not log:
            ax.set_xlim(0, right * 1.25)
        else:
            ax.set_xlim(right=right * 3)
    fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    return fig, failed


def plot_fraction(s, out, kinds, what, ylabel, ceiling_text):
    """Fraction of a ceiling against the block size, one line per kernel and variant measured at several
    block sizes, one bar per kernel measured at one."""
    rows = [k for k in s.kernels if k["fraction_of"] in kinds and k["fraction"] is not None]
    if not rows:
        return False
    series = {}
    for k in rows:
        series.setdefault(f"{series_label(k['kernel'], k['variant'])} (of {k['fraction_of']})", []).append(k)
    fig, _ = kernel_panels(series, lambda p: p["fraction"], ylabel, 1.0, s.title(ceiling_text))
    out.save(fig, suite_name(s.label, what))
    return True


def plot_suite(s, out):
    def ceiling(key, name, unit):
        v = s.ceilings.get(key)
        return f"{name} {v:.4g} {unit}" if v is not None else None

    if not s.kernels:
        log_note(f"skipped the kernel pictures of {s.path}: its \"kernels\" array is empty")
    else:
        limits = ", ".join(c for c in (ceiling("copy_gbs", "copy", "GB/s"), ceiling("read_gbs", "read", "GB/s")) if c)
        if not plot_fraction(s, out, ("copy", "read"), "bandwidth", "fraction of the bandwidth ceiling",
                             "fraction of the copy / read-only bandwidth" + (f" ({limits})" if limits else "")):
            log_note(f"skipped the bandwidth picture of {s.path}: no kernel row has a copy or read fraction")
        flops = ceiling("fp64_gflops", "fp64", "GFLOP/s")
        plot_fraction(s, out, ("fp64",), "fp64", "fraction of the fp64 ceiling",
                      "fraction of the fp64 peak" + (f" ({flops})" if flops else ""))
        plot_speedup(s, out)
    plot_applications(s, out)


def plot_speedup(s, out):
    rows = [k for k in s.kernels if k["speedup"] is not None and k["speedup"] > 0]
    if not rows:
        log_note(f"skipped the speedup picture of {s.path}: no kernel row has a baseline speedup")
        return
    series = {}
    for k in rows:
        series.setdefault(f"{series_label(k['kernel'], k['variant'])} vs {k['baseline'] or 'baseline'}", []).append(k)
    values = [k["speedup"] for k in rows]
    fig, _ = kernel_panels(series, lambda p: p["speedup"], "speedup (baseline ms / ours ms; > 1: ours faster)", 1.0,
                           s.title("speedup over the vendor baseline"), log=max(values) / min(values) > 30)
    out.save(fig, suite_name(s.label, "speedup"))


def value_labels(ax, bars, values):
    for bar, v in zip(bars, values):
        ax.annotate(f"{v:.3g}", (bar.get_x() + bar.get_width() / 2, bar.get_height()), textcoords="offset points",
                    xytext=(0, 2), ha="center", va="bottom", fontsize="x-small")


def case_labels(ax, cases):
    crowded = len(cases) > 6 or sum(len(c) for c in cases) > 60
    ax.set_xticklabels(cases, rotation=20 if crowded else 0, ha="right" if crowded else "center")


def log_if_wide(ax, values):
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > 50:
        ax.set_yscale("log")


def plot_applications(s, out):
    if not s.applications:
        log_note(f"skipped the applications picture of {s.path}: its \"applications\" array is empty")
        return
    cases = [a["case"] for a in s.applications]
    values = [a["value"] for a in s.applications]
    unit = next((a["unit"] for a in s.applications if a["unit"]), "")
    fig, axes = new_figure(max(9.5, 1.1 * len(cases) + 3), 5.2)
    ax = axes[0]
    bars = ax.bar(range(len(cases)), values, color=[f"C{i % 10}" for i in range(len(cases))])
    value_labels(ax, bars, values)
    ax.set_xticks(range(len(cases)))
    case_labels(ax, cases)
    log_if_wide(ax, values)
    ax.set_ylabel(f"figure of merit{display_units(unit)}")
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(s.title(f"applications' figures of merit; suite {s.score_text()}"), fontsize="medium")
    fig.tight_layout()
    out.save(fig, suite_name(s.label, "applications"))


def machine_names(suites):
    names = [s.hardware for s in suites]
    return [f"{n} ({s.label})" if names.count(n) > 1 else n for n, s in zip(names, suites)]


def grouped_bars(ax, groups, machines, value_of):
    """Bars grouped by `groups` (x), one bar per machine; value_of(machine index, group) -> value or None."""
    import numpy as np

    width = 0.8 / max(1, len(machines))
    drawn = []
    for m, name in enumerate(machines):
        xs, ys = [], []
        for g, group in enumerate(groups):
            v = value_of(m, group)
            if v is not None:
                xs.append(g - 0.4 + width * (m + 0.5))
                ys.append(v)
                drawn.append(v)
        bars = ax.bar(xs, ys, width=width, color=f"C{m % 10}", label=name)
        if len(groups) * len(machines) <= 24:
            value_labels(ax, bars, ys)
    ax.set_xticks(np.arange(len(groups)))
    return drawn


def plot_comparison(suites, out):
    machines = machine_names(suites)
    label = joined_label([s.label for s in suites])

    cases = []
    for s in suites:
        cases += [a["case"] for a in s.applications if a["case"] not in cases]
    if not cases:
        log_note(f"skipped the applications comparison of {', '.join(s.path for s in suites)}: no application rows")
    else:
        values = [{a["case"]: a["value"] for a in s.applications} for s in suites]
        unit = next((a["unit"] for s in suites for a in s.applications if a["unit"]), "")
        fig, axes = new_figure(max(8.0, 0.9 * len(cases) * len(suites) + 3), 5.0 + 0.25 * len(suites))
        ax = axes[0]
        drawn = grouped_bars(ax, cases, machines, lambda m, c: values[m].get(c))
        case_labels(ax, cases)
        log_if_wide(ax, drawn)
        ax.set_ylabel(f"figure of merit{display_units(unit)}")
        ax.grid(True, axis="y", alpha=0.3)
        handles, _ = ax.get_legend_handles_labels()
        fig.legend(handles, [f"{m}: {s.score_text()}{s.validity_text()}" for m, s in zip(machines, suites)],
                   loc="lower center", ncol=1, fontsize="small", title="hardware: suite score",
                   title_fontsize="small")
        ax.set_title("applications' figures of merit per case, machines side by side", fontsize="medium")
        fig.tight_layout(rect=(0, (0.45 + 0.2 * len(suites)) / fig.get_figheight(), 1, 1))
        out.save(fig, suite_name(label, "applications"))

    kernels = []
    for s in suites:
        for k in s.kernels:
            if k["gbs"] is not None and (k["kernel"], k["variant"]) not in kernels:
                kernels.append((k["kernel"], k["variant"]))
    if not kernels:
        log_note(f"skipped the kernel comparison of {', '.join(s.path for s in suites)}: no kernel rows with GB/s")
        return
    cols = 1 if len(kernels) == 1 else 2 if len(kernels) <= 4 else 3
    rows = (len(kernels) + cols - 1) // cols
    fig, axes = new_figure(5.2 * cols, 3.4 * rows + 1.0, rows, cols)
    for ax in axes[len(kernels):]:
        ax.set_visible(False)
    for ax, (kernel, variant) in zip(axes, kernels):
        table = []
        for s in suites:
            mine = {}
            for k in s.kernels:
                if (k["kernel"], k["variant"]) == (kernel, variant) and k["gbs"] is not None:
                    mine.setdefault(k["block_size"], k["gbs"])  # the first row of a block size
            table.append(mine)
        sizes = sorted({b for t in table for b in t})
        grouped_bars(ax, sizes, machines, lambda m, b: table[m].get(b))
        ax.set_xticklabels([str(b) for b in sizes], fontsize="small")
        ax.set_title(series_label(kernel, variant), fontsize="medium")
        ax.set_xlabel("block size")
        ax.set_ylabel("GB/s")
        ax.grid(True, axis="y", alpha=0.3)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=min(len(names), 4), fontsize="small", title="hardware",
               title_fontsize="small")
    fig.suptitle("achieved GB/s per kernel and block size, machines side by side", fontsize="medium")
    bottom = (0.9 + 0.3 * ((len(names) - 1) // 4)) / fig.get_figheight()  # inches of the legend
    fig.tight_layout(rect=(0, bottom, 1, 1 - 0.4 / fig.get_figheight()))
    out.save(fig, suite_name(label, "kernels"))


# ---- the command line ----------------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"error: blockres plot: {message} (see 'blockres plot --help')", file=sys.stderr)
        sys.exit(1)


def parse(argv):
    p = Parser(prog="blockres plot", description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", metavar="FILE", help="result files (.h5) and bench suite reports (.json)")
    p.add_argument("--output", default="plots", metavar="DIR", help="folder for the pictures (default: plots)")
    p.add_argument("--format", default="png", choices=("png", "svg"), help="picture format (default: png)")
    p.add_argument("--field", action="append", default=[], metavar="NAME",
                   help="cell field to map (repeatable; default: pressure and the saturation or first mass fraction)")
    p.add_argument("--layer", action="append", type=int, default=[], metavar="K",
                   help="layer k to map, 1-based (repeatable; default: the top and bottom layers)")
    p.add_argument("--step", action="append", type=int, default=[], metavar="I",
                   help="report row to map (repeatable; negative counts from the end; default: -1, the last)")
    return p.parse_args(argv)


def run(args):
    kinds = []
    for path in args.files:
        kinds.append(detect(path))  # every file checked before anything is drawn

    import matplotlib

    matplotlib.use("Agg")
    warnings.filterwarnings("ignore", category=RuntimeWarning)  # all-NaN slices and the like

    labels = unique_labels(args.files)
    results, suites = [], []
    try:
        for path, label, (kind, report) in zip(args.files, labels, kinds):
            if kind == "result":
                results.append(Result(path, label))
            else:
                with About(path):
                    suites.append(Suite(path, label, report))
        plan = resolve_maps(results, args.field, args.layer, args.step) if results else []
        if suites and not results and (args.field or args.layer or args.step):
            raise PlotError("--field, --layer and --step apply to result files (.h5); none was given")
        out = Output(args.output, args.format)
        if results:
            with About(", ".join(r.path for r in results)):
                plot_wells(results, out)
            for r, fields, layers, rows in plan:
                with About(r.path):
                    plot_maps(r, fields, layers, rows, out)
        for s in suites:
            with About(s.path):
                plot_suite(s, out)
        if len(suites) > 1:
            with About(", ".join(s.path for s in suites)):
                plot_comparison(suites, out)
        if not out.written:
            log_note("nothing to draw: no picture written")
    finally:
        for r in results:
            r.close()
    return 0


def main(argv):
    args = parse(argv)
    import_modules()
    try:
        return run(args)
    except PlotError as e:
        sys.stdout.flush()
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # never a traceback: one line naming what failed
        sys.stdout.flush()
        print(f"error: blockres plot: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
