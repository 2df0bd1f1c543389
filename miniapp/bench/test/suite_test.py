#!/usr/bin/env python3
"""CPU tests of `blockres bench` (the procurement suite), run by CTest:
  valid   BLOCKRES REPORT SCHEMA  the small CPU suite reports VALID (exit 0) and its JSON validates against the schema
  poison  BLOCKRES REPORT         BLOCKRES_SUITE_POISON=bsrmv: a wrong kernel result makes it INVALID (exit 1), named
  compare BLOCKRES REPORT         --compare of a report with a copy whose figures are scaled prints the right ratios
  bad     BLOCKRES REPORT         missing, truncated, foreign and other-version reports: exit code 2 and a clear line
  bad_baselines BLOCKRES REPORT   hostile baselines files (--baselines): INVALID naming the file or case, no crash
"""
import copy
import json
import os
import re
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout + p.stderr


def suite(blockres, report, env=None):
    return run([blockres, "bench", "--backend", "cpu", "--size", "small", "--threads", "2", "--json", report], env)


def valid(blockres, report, schema_path):
    rc, out = suite(blockres, report)
    print(out[-4000:])
    with open(report) as f:
        rep = json.load(f)
    if rc != 0 or rep["validity"]["verdict"] != "VALID":
        fail(f"exit code {rc}, verdict {rep['validity']['verdict']}: {rep['validity']['reasons']}")
    import jsonschema
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.validate(rep, schema)
    # The schema must be able to fail: a report without its verdict, and one that says VALID with a reason.
    for broken in (lambda r: r.pop("validity"),
                   lambda r: r["validity"]["reasons"].append("x"),
                   lambda r: r["kernels"][0].pop("check")):
        bad = copy.deepcopy(rep)
        broken(bad)
        try:
            jsonschema.validate(bad, schema)
        except jsonschema.ValidationError:
            continue
        fail("the schema accepted a broken report")
    kinds = {r["kernel"] for r in rep["kernels"]}
    for k in ("bsrmv", "lu_factor", "lu_solve", "gauss_huard_factor", "gauss_jordan_invert", "block_jacobi_apply",
              "bilu0_isai_setup", "amg_setup", "amg_apply"):
        if k not in kinds:
            fail(f"no {k} row")
    cases = [a["case"] for a in rep["applications"]]
    if cases != ["oil_water", "multicomponent_nc3", "multicomponent_nc8", "multicomponent_nc16",
                 "multicomponent_nc32", "multicomponent_nc64"]:
        fail(f"application cases {cases}")
    if not all(a["check"]["pass"] for a in rep["applications"]):
        fail("an application check did not pass")
    if not rep["score"]["value"] > 0:
        fail("no suite score")
    print("PASS: VALID, schema-valid, every section present")


def poison(blockres, report):
    env = dict(os.environ, BLOCKRES_SUITE_POISON="bsrmv")
    rc, out = suite(blockres, report, env)
    with open(report) as f:
        rep = json.load(f)
    reasons = rep["validity"]["reasons"]
    print("\n".join(reasons))
    if rc != 1 or rep["validity"]["verdict"] != "INVALID":
        fail(f"exit code {rc}, verdict {rep['validity']['verdict']}")
    if not any(r.startswith("kernel bsrmv") for r in reasons):
        fail("no reason names the bsrmv kernel")
    if "invalid: kernel bsrmv" not in out:
        fail("the terminal summary does not name the kernel")
    print("PASS: INVALID, naming bsrmv")


def bad_baselines(blockres, report):
    """Hostile baselines files: not JSON, not a baselines object, another suite version, and a real one whose
    entries are damaged. The suite must finish, say INVALID (exit 1) and name the file or the case; never crash."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "verification", "bench_suite",
                       "baselines.json")
    with open(src) as f:
        good = json.load(f)
    with tempfile.TemporaryDirectory() as d:
        files = {}
        files["not_json"] = os.path.join(d, "not_json.json")
        with open(files["not_json"], "w") as f:
            f.write('{"suite_version": 1, "sizes": {')
        files["array"] = os.path.join(d, "array.json")
        with open(files["array"], "w") as f:
            f.write("[1, 2, 3]")
        files["version"] = os.path.join(d, "version.json")
        with open(files["version"], "w") as f:
            json.dump({"suite_version": "one", "sizes": {}}, f)
        damaged = copy.deepcopy(good)
        small = damaged["sizes"]["small"]
        small["oil_water"]["summary"] = {"steps": "x"}
        small["multicomponent_nc3"]["summary"]["well_rates"] = [1, 2]
        small["multicomponent_nc8"]["summary"]["in_place"] = {"C1_in_place": {"group": 5, "values": "zz"}}
        del small["multicomponent_nc16"]["recorded_with"]
        files["damaged"] = os.path.join(d, "damaged.json")
        with open(files["damaged"], "w") as f:
            json.dump(damaged, f)
        expect = {"not_json": ["not_json.json"], "array": ["array.json", "not a bench suite baselines file"],
                  "version": ["version.json", "suite version"],
                  "damaged": ["application oil_water: ", "not a summary", "application multicomponent_nc3: ",
                              "application multicomponent_nc8: ", "application multicomponent_nc16: "]}
        for name, path in files.items():
            rc, out = run([blockres, "bench", "--backend", "cpu", "--size", "small", "--threads", "2", "--baselines",
                           path, "--json", report])
            reasons = json.load(open(report))["validity"]["reasons"] if os.path.exists(report) else []
            print(f"{name}: exit {rc}; " + " | ".join(reasons)[:600])
            if rc != 1:
                fail(f"{name}: exit code {rc}, expected 1 (INVALID)")
            text = "\n".join(reasons)
            for e in expect[name]:
                if e not in text:
                    fail(f"{name}: no reason mentions {e!r}")
            if "Traceback" in out or "terminate" in out or "Segmentation" in out:
                fail(f"{name}: not a clean run")
    print("PASS: every hostile baselines file gives INVALID with a reason naming it")


def compare(blockres, report):
    with open(report) as f:
        rep = json.load(f)
    other = copy.deepcopy(rep)
    other["hardware"]["cpu"]["model"] = "twice as fast"
    for k in ("copy_gbs", "read_gbs", "fp64_gflops"):
        other["ceilings"][k] *= 2
    for r in other["kernels"]:
        r["gbs"] *= 2
    for r in other["krylov"]:
        r["us_per_iteration"] /= 2
    for a in other["applications"]:
        a["figure_of_merit"]["value"] *= 2
    other["score"]["value"] *= 2
    with tempfile.TemporaryDirectory() as d:
        b = os.path.join(d, "b.json")
        with open(b, "w") as f:
            json.dump(other, f)
        rc, out = run([blockres, "bench", "--compare", report, b])
    print(out)
    if rc != 0:
        fail(f"exit code {rc}")
    rows = [l for l in out.splitlines() if l.startswith("  ") and not l.startswith("  [")]
    ratios = [float(m) for l in rows for m in re.findall(r"([0-9.]+)x\s*$", l)]
    expected = 3 + len(rep["kernels"]) + len(rep["krylov"]) + len(rep["applications"]) + 1
    if len(ratios) != expected:
        fail(f"{len(ratios)} ratios printed, {expected} expected")
    if any(abs(r - 2.0) > 0.011 for r in ratios):
        fail(f"ratios {ratios} (all should be 2.00)")
    if "suite score" not in out:
        fail("no suite score line")
    if "(*)" in out:
        fail("a row marked as different work where every row's bytes are the same")
    # A row whose bytes differ (another size, or counted another way) gets no ratio: "(*)" and a note.
    changed = copy.deepcopy(other)
    changed["kernels"][0]["bytes"] *= 3
    with tempfile.TemporaryDirectory() as d:
        b = os.path.join(d, "c.json")
        with open(b, "w") as f:
            json.dump(changed, f)
        rc, out2 = run([blockres, "bench", "--compare", report, b])
    if rc != 0:
        fail(f"exit code {rc} with one row's bytes changed")
    rows2 = [l for l in out2.splitlines() if l.startswith("  ") and not l.startswith("  [") and not l.startswith("  (*)")]
    ratios2 = [float(m) for l in rows2 for m in re.findall(r"([0-9.]+)x\s*$", l)]
    key = f"{rep['kernels'][0]['kernel']} bs {rep['kernels'][0]['block_size']}"
    starred = [l for l in rows2 if l.strip().startswith(key) and l.rstrip().endswith("(*)")]
    if len(ratios2) != expected - 1 or len(starred) != 1 or "not compared" not in out2:
        fail(f"one row's bytes changed: {len(ratios2)} ratios (expected {expected - 1}), {len(starred)} starred rows")
    print(f"PASS: {len(ratios)} ratios, all 2.00x; a row of other bytes not compared")


def bad(blockres, report):
    with open(report) as f:
        text = f.read()
    rep = json.loads(text)
    with tempfile.TemporaryDirectory() as d:
        cases = {}
        cases["truncated"] = os.path.join(d, "truncated.json")
        with open(cases["truncated"], "w") as f:
            f.write(text[: len(text) // 2])
        cases["foreign"] = os.path.join(d, "foreign.json")
        with open(cases["foreign"], "w") as f:
            json.dump({"benchmark": "bsrmv", "rows": []}, f)
        cases["version"] = os.path.join(d, "version.json")
        v = copy.deepcopy(rep)
        v["suite_version"] = rep["suite_version"] + 1
        with open(cases["version"], "w") as f:
            json.dump(v, f)
        cases["missing"] = os.path.join(d, "missing.json")
        for name, path in cases.items():
            rc, out = run([blockres, "bench", "--compare", report, path])
            print(f"{name}: exit {rc}: {out.strip()}")
            if rc != 2:
                fail(f"{name}: exit code {rc}, expected 2")
            if os.path.basename(path) not in out:
                fail(f"{name}: the message does not name the file")
            if "Traceback" in out or "terminate" in out:
                fail(f"{name}: not a clean error")
    print("PASS: every bad report exits 2 naming its file")


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"valid": valid, "poison": poison, "compare": compare, "bad": bad, "bad_baselines": bad_baselines}[mode](*args)
