#!/usr/bin/python3
"""jobs/model.py and jobs/collect.py on synthetic inputs: n_0.8 from a
synthetic stream fit equals the closed form 4 a / c, E(n_0.8) = 0.8, the
halo bandwidth term only raises it, and collect.py turns two fake summaries
plus the fit into the CSV with predicted columns and both plots.
Usage: check_model.py ROOT OUTDIR"""
import csv
import math
import os
import shutil
import subprocess
import sys

root, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "jobs"))
import model  # noqa: E402

shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
fit = os.path.join(out, "stream_fit.yaml")
comm = os.path.join(out, "comm.yaml")
with open(fit, "w") as f:
    f.write("backend: cpu\nkernels:\n  BS1:\n    name: copy\n    t0_seconds: 1.0e-06\n    wmax_gbps: 10.0\n")
with open(comm, "w") as f:
    f.write("ranks: 2\nlatency_s: 2.0e-06\nbandwidth_gbps: 0\nallreduce_s: 3.0e-06\n")

m = model.from_files(fit, comm, order=4)
bpd = model.BYTES_G + model.BYTES_L * (5.0 / 4.0) ** 3
assert abs(m.bytes_per_dof() - bpd) < 1e-12, m.bytes_per_dof()
a = model.KERNELS * 1e-6 + 2 * 3e-6 + 1 * 2e-6          # 2 ranks: one message
c = bpd / 10e9
n08 = 4 * a / c
assert abs(m.n08_closed_form(2) - n08) <= 1e-12 * n08, (m.n08_closed_form(2), n08)
assert abs(m.n08(2) - n08) <= 1e-9 * n08, (m.n08(2), n08)
assert abs(m.efficiency(m.n08(2), 2) - 0.8) < 1e-9
# one rank: no communication, the seed's B_0.8 = 4 T0 Wmax per iteration
n1 = 4 * model.KERNELS * 1e-6 / c
assert abs(m.n08(1) - n1) <= 1e-9 * n1, (m.n08(1), n1)
# a finite halo bandwidth only adds time: n_0.8 grows
m2 = model.Model(1e-6, 10e9, order=4, lat=2e-6, bw=1e9, t_allreduce=3e-6)
assert m2.n08(2) > n08 and math.isfinite(m2.n08(2))
# strong efficiency relative to the first rank count is 1 there
assert abs(m.strong_efficiency(1e6, 1, 1) - 1.0) < 1e-15

# collect.py with two fake summaries and the fit
for np_, it, ts in ((1, 10, 1.0), (2, 10, 0.6)):
    d = os.path.join(out, f"np{np_}")
    os.makedirs(d)
    with open(os.path.join(d, "summary.yaml"), "w") as f:
        f.write(f"ranks: {np_}\nmesh: {{type: box, elements: 64}}\norder: 4\ndofs: 4913\n"
                f"solver: {{iterations: {it}}}\ntimers_s: {{operator: 0.5, preconditioner: 0.1, "
                f"reductions: 0.1, exchange: 0.05, solve: {ts}}}\n")
r = subprocess.run([sys.executable, os.path.join(root, "jobs", "collect.py"), "strong", out, "--fit", fit,
                    "--comm", comm], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
assert "n_0.8" in r.stdout, r.stdout
rows = list(csv.DictReader(open(os.path.join(out, "scaling.csv"))))
assert [x["ranks"] for x in rows] == ["1", "2"]
p1, p2 = (float(x["predicted_t_per_iteration"]) for x in rows)
assert abs(p1 - m.t_iter(4913, 1)) < 1e-15 and abs(p2 - m.t_iter(4913 / 2, 2)) < 1e-15, (p1, p2)
assert abs(float(rows[1]["predicted_efficiency"]) - p1 / (2 * p2)) < 1e-12
assert abs(float(rows[1]["efficiency"]) - 1.0 / 1.2) < 1e-12
assert abs(float(rows[0]["t_operator"]) - 0.05) < 1e-15
try:
    import matplotlib  # noqa: F401
    for png in ("scaling.png", "time_split.png"):
        assert os.path.getsize(os.path.join(out, png)) > 1000, png
except ImportError:
    pass
# a pmg series: the Jacobi-PCG model is not drawn beside it (refused with a message, the CSV
# still written without the predicted columns); an unstable fit is used with a warning
pm = os.path.join(out, "pmg")
for np_ in (1, 2):
    d = os.path.join(pm, f"np{np_}")
    os.makedirs(d)
    with open(os.path.join(d, "summary.yaml"), "w") as f:
        f.write(f"ranks: {np_}\nmesh: {{type: box, elements: 64}}\norder: 4\ndofs: 4913\n"
                f"solver: {{iterations: 5, preconditioner: pmg}}\npreconditioner: {{setup_s: 0.2}}\n"
                f"timers_s: {{setup: 0.3, operator: 0.1, preconditioner: 0.4, reductions: 0.01, exchange: 0.01, "
                f"solve: 0.6}}\n")
r = subprocess.run([sys.executable, os.path.join(root, "jobs", "collect.py"), "strong", pm, "--fit", fit,
                    "--no-plots"], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
assert "no prediction" in r.stderr and "ran preconditioner pmg" in r.stderr, r.stderr
rows = list(csv.DictReader(open(os.path.join(pm, "scaling.csv"))))
assert "predicted_t_per_iteration" not in rows[0], rows[0]
assert abs(float(rows[0]["t_precond"]) - 0.4 / 5) < 1e-15, rows[0]     # the applies, no setup taken out
assert abs(float(rows[0]["t_pc_setup"]) - 0.2) < 1e-15, rows[0]
ufit = os.path.join(out, "unstable_fit.yaml")
with open(ufit, "w") as f:
    f.write("backend: cpu\nstable: false\nkernels:\n  BS1:\n    t0_seconds: 1.0e-06\n    wmax_gbps: 10.0\n")
r = subprocess.run([sys.executable, os.path.join(root, "jobs", "collect.py"), "strong", out, "--fit", ufit,
                    "--no-plots"], capture_output=True, text=True)
assert r.returncode == 0 and "stable: false" in r.stderr, (r.returncode, r.stderr)
r = subprocess.run([sys.executable, os.path.join(root, "jobs", "collect.py"), "strong", out, "--bogus"],
                   capture_output=True, text=True)
assert r.returncode == 2, r.returncode
print("model ok")
