#!/usr/bin/python3
"""Robin boundaries and pure-Neumann Poisson end to end (issue 29 items 2, 4).

check_robin_neumann.py MPIEXEC HEXCG SOURCE WORK [robin|neumann|all]
Robin (configs/robin_box.yaml: Robin with alpha = 2, 1 and 1 + x^2 on three
faces, u = exp(x + y + z)):
 - exponential convergence in p on 3^3 elements: from p = 2 to 6 every step
   divides the L2 error by more than 5 (the analytic solution's coefficients
   fall faster than that: measured ~80x per order) until the error is below
   1e-9 (the solver tolerance 1e-12 keeps the algebraic error far below);
 - algebraic convergence in h at p = 3 on 2, 4, 8 elements per direction:
   the L2 rate log2(e_h / e_{h/2}) of the last halving >= 3.5 (p + 1 = 4
   expected);
 - pmg (fp32 and fp64), asm and jacobi converge on 1-3 ranks, pmg iteration
   counts with Robin within 1.5x of the same mesh with Dirichlet everywhere,
   and the same count (within 1) on 1, 2 and 3 ranks; pmg with the FEM Q1
   coarse matrix (fp64, fp32; it adds the Robin term element by element)
   reaches the same L2 < 1e-8;
 - on curved Gmsh faces (regression/meshes/extruded.geo meshed at second
   order, hex27; its circular notch of radius 0.4 around (0, 1) Robin with
   alpha = 1 + x^2 and the exact flux through the exact normal, the bottom
   Robin with alpha = 2): the L2 error falls by more than 10x per order from
   p = 1 to 4 at lc = 0.15, and the p = 6 error (the geometry's floor: the
   quadratic faces approximate the circle) falls by more than 4x from
   lc = 0.3 to 0.15; pmg within 1.5x of all-Dirichlet; operator.geometry
   split (hex27: curved, split factors stored) gives the fp64 geometry's
   error within 1e-6 relative (skipped without /usr/bin/gmsh);
 - an alpha expression negative at a node: exit 2, the message names the
   case, the key, the tag and the node, no output folder; the same when it
   is negative only at a node of a lower pmg level (order 2).
Neumann (configs/neumann_box.yaml, u = cos(pi x) cos(pi y) cos(pi z)):
 - jacobi (1 rank), asm (fp64, fp32) and pmg (fp32) on 1-3 ranks, pmg with
   every smoother, fp64, the FEM coarse operator, under pcg, fcg (ras) and
   pcg1 on 2 ranks: converged, L2 error against the zero-mean exact
   solution below 1e-6 at 4^3, p = 5 (the discretisation error, ~1e-7),
   summary.yaml nullspace.defect < 1e-12 and no warning;
 - algebraic h-convergence at p = 3 (rate >= 3.5 from 4 to 8 elements);
 - exponential convergence in p on 3^3 (p = 2..6, every step divides the
   L2 error by more than 5 until it is below 1e-9; measured 18-27x);
 - the null space found from the values at the nodes, not the syntax: a
   lambda expression that is 0 everywhere ("0*x"), and a Robin alpha "x" on
   xmin (0 at every node of that face), solve with pmg on 2 ranks (before:
   pmg broke down on an indefinite preconditioner), summary.yaml
   nullspace.projected, and the error of the plain case within 1e-6;
 - split geometry on the deformed box (mesh.deform 0.05): pmg with
   operator.geometry split gives Jacobi's (fp64 geometry) error within
   1e-6 relative;
 - the exact solution shifted by a constant (exact: "... + 2") gives the same
   error (the mean is removed from both) and nullspace.exact_mean = 2 (1e-10);
 - incompatible data (rhs + 1): still converges, summary.yaml defect > 1e-3
   and the run warns on stderr ("not compatible").
Neumann with rank 0 empty (part neumann-ranks, 2 ranks): metis puts both
elements of a 1 x 1 x 2 (2 x 1 x 1, 1 x 2 x 1) box on rank 1, p = 5; the
default pmg (FP32 cycle), its additive cycle and the FEM coarse operator
converge and give the FP64 pmg's L2 error within 1e-6 relative (measured
5e-9). Before: the coarse level pinned its null-space vertex on rank 0 only,
so here A0 stayed singular, BoomerAMG turned the 1e-8 defect of the FP32
coarse right-hand side into a 1e8 correction, and PCG stopped with
diverged_indefinite_preconditioner at iteration 0-13.
Prints the figures."""
import math
import os
import shutil
import subprocess
import sys

import yaml

mpiexec, hexcg, src, work = sys.argv[1:5]
which = sys.argv[5] if len(sys.argv) > 5 else "all"
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
fail = []
n_run = [0]


def run(case, sets, np=1, expect_rc=0):
    n_run[0] += 1
    out = os.path.join(work, f"run{n_run[0]}")
    args = [mpiexec, "-n", str(np), hexcg, "run", case, "--output", out, "-q",
            "--set", "output.solution=false", "--set", "output.history=false"]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if p.returncode != expect_rc:
        fail.append(f"{case} {sets} np{np}: exit {p.returncode}: {p.stderr.strip()[:600]}")
        return None, p
    if expect_rc:
        return out, p
    s = yaml.safe_load(open(os.path.join(out, "summary.yaml")))
    if not s["solver"]["converged"]:
        fail.append(f"{case} {sets} np{np}: not converged ({s['solver']['reason']})")
    return s, p


def l2(s):
    return s["error"]["l2"] if s else float("nan")


def its(s):
    return s["solver"]["iterations"] if s else 10**9


def robin():
    case = os.path.join(src, "configs/robin_box.yaml")
    tight = ["solver.tol=1e-12", "solver.max_iterations=3000"]
    errs = []
    for p in range(2, 7):
        s, _ = run(case, tight + ["mesh.elements=[3,3,3]", f"order={p}"])
        errs.append(l2(s))
    print("robin box p = 2..6, L2:", " ".join(f"{e:.3e}" for e in errs))
    for i in range(len(errs) - 1):
        if errs[i] > 1e-9 and not errs[i + 1] < errs[i] / 5:
            fail.append(f"robin box: p = {i + 2} -> {i + 3}: L2 {errs[i]:.3e} -> {errs[i + 1]:.3e} (not / 5)")
    eh = []
    for ne in (2, 4, 8):
        s, _ = run(case, tight + [f"mesh.elements=[{ne},{ne},{ne}]", "order=3"])
        eh.append(l2(s))
    rate = math.log2(eh[1] / eh[2])
    print(f"robin box p = 3, 2/4/8 elements, L2: {eh[0]:.3e} {eh[1]:.3e} {eh[2]:.3e}, rate {rate:.2f}")
    if not rate >= 3.5:
        fail.append(f"robin box: h rate {rate:.2f} < 3.5")
    dirichlet = ["problem.boundary=[{tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}]"]
    base = ["mesh.elements=[4,4,4]", "order=5"]
    sd, _ = run(case, base + dirichlet)
    for prec in ("fp32", "fp64"):
        counts = []
        for np in (1, 2, 3):
            s, _ = run(case, base + ["preconditioner.type=pmg", f"preconditioner.precision={prec}"], np)
            counts.append(its(s))
            if s and not l2(s) < 1e-8:
                fail.append(f"robin pmg {prec} np{np}: L2 {l2(s):.3e}")
        print(f"robin pmg {prec}: iterations on 1/2/3 ranks {counts}, all-Dirichlet {its(sd)}")
        if max(counts) > 1.5 * its(sd):
            fail.append(f"robin pmg {prec}: {counts} iterations, more than 1.5 x {its(sd)} (Dirichlet)")
        if max(counts) - min(counts) > 1:
            fail.append(f"robin pmg {prec}: iterations {counts} differ by more than 1 over the ranks")
    for prec in ("fp64", "fp32"):
        s, _ = run(case, base + ["preconditioner.type=pmg", "preconditioner.coarse.operator=fem",
                                 f"preconditioner.precision={prec}"], 2)
        print(f"robin pmg fem coarse {prec}: {its(s)} iterations, L2 {l2(s):.3e}")
        if s and not l2(s) < 1e-8:
            fail.append(f"robin pmg fem coarse {prec}: L2 {l2(s):.3e}")
    for pc in ("jacobi", "asm"):
        for np in (1, 3):
            s, _ = run(case, base + [f"preconditioner.type={pc}", "solver.max_iterations=2000"], np)
            if s and not l2(s) < 1e-8:
                fail.append(f"robin {pc} np{np}: L2 {l2(s):.3e}")
    # curved Gmsh faces
    if os.path.exists("/usr/bin/gmsh"):
        geo = open(os.path.join(src, "regression/meshes/extruded.geo")).read()
        geo = geo.replace('Physical Surface("side") = {out[2], out[3], out[4], out[5], out[6]};',
                          'Physical Surface("notch") = {out[5]};\nPhysical Surface("side") = {out[2], out[3], out[4], out[6]};')
        gcase = os.path.join(work, "robin_gmsh.yaml")
        for lc in ("0.3", "0.15"):
            g = os.path.join(work, f"notch{lc}.geo")
            open(g, "w").write(geo.replace("lc = 0.3;", f"lc = {lc};"))
            subprocess.run(["/usr/bin/gmsh", "-3", "-order", "2", "-format", "msh41", "-o",
                            os.path.join(work, f"notch{lc}.msh"), g], check=True, capture_output=True, timeout=120)
        open(gcase, "w").write("""mesh: {type: gmsh, file: notch0.15.msh}
order: 3
problem:
  rhs: "-3*exp(x + y + z)"
  exact: "exp(x + y + z)"
  boundary:
    - {tags: [notch], type: robin, alpha: "1 + x^2", value: "exp(x + y + z)*(1 + x^2 - (x + y - 1)/0.4)"}
    - {tags: [bottom], type: robin, alpha: 2, value: "exp(x + y)"}
    - {tags: [top, side], type: dirichlet, value: exact}
solver: {type: pcg, tol: 1.0e-12, max_iterations: 2000}
preconditioner: {type: pmg}
""")
        ep = [l2(run(gcase, [f"order={p}"], 2)[0]) for p in range(1, 5)]
        print("robin gmsh (curved notch) lc 0.15, p = 1..4, L2:", " ".join(f"{e:.3e}" for e in ep))
        for i in range(3):
            if not ep[i + 1] < ep[i] / 10:
                fail.append(f"robin gmsh: p = {i + 1} -> {i + 2}: L2 {ep[i]:.3e} -> {ep[i + 1]:.3e} (not / 10)")
        e6 = [l2(run(gcase, [f"mesh.file=notch{lc}.msh", "order=6"])[0]) for lc in ("0.3", "0.15")]
        print(f"robin gmsh p = 6, lc 0.3 / 0.15, L2: {e6[0]:.3e} {e6[1]:.3e}")
        if not e6[1] < e6[0] / 4:
            fail.append(f"robin gmsh: p = 6 floor {e6[0]:.3e} -> {e6[1]:.3e} (not / 4)")
        sr, _ = run(gcase, ["order=4"])
        sd, _ = run(gcase, ["order=4", "problem.boundary=[{tags: [notch, bottom, top, side], type: dirichlet, value: exact}]"])
        print(f"robin gmsh pmg p = 4: {its(sr)} iterations, all-Dirichlet {its(sd)}")
        if its(sr) > 1.5 * its(sd):
            fail.append(f"robin gmsh pmg: {its(sr)} iterations, more than 1.5 x {its(sd)}")
        ss, _ = run(gcase, ["order=4", "operator.geometry=split"])
        if ss and sr:
            print(f"robin gmsh split geometry p = 4: {its(ss)} iterations, L2 {l2(ss):.6e} (fp64 {l2(sr):.6e}), "
                  f"{ss['operator']['elements_split']} split elements")
            if not ss["operator"]["elements_split"] > 0 or abs(l2(ss) - l2(sr)) > 1e-6 * l2(sr):
                fail.append(f"robin gmsh split: L2 {l2(ss):.9e} vs {l2(sr):.9e}, "
                            f"{ss['operator']['elements_split']} split elements")
    else:
        print("(no /usr/bin/gmsh: the curved Gmsh check is skipped)")
    # alpha < 0 at a node
    refused("bad_alpha", robin_case(2, 3, "y - 0.5", 0), 2,
            "problem.boundary.1.alpha: Robin coefficient alpha on boundary tag 'xmax' is -0.5 at the node (1, 0, 0)",
            "negative alpha")
    # >= 0 at the order-5 nodes, negative at y = 0.5, a node of the order-2 pmg level only
    refused("bad_alpha_level",
            robin_case(1, 5, "(y - 0.5)^2 - 1e-4", 1, "preconditioner: {type: pmg, levels: [5, 2, 1]}\n"), 1,
            "problem.boundary.1.alpha: Robin coefficient alpha on boundary tag 'xmax' is -0.0001 at the node "
            "(1, 0.5, 0) (order 2)", "negative alpha on a pmg level")


def robin_case(n, order, alpha, value, more=""):
    """A box of n^3 elements, f = 0, Dirichlet 0 on xmin, Robin (alpha, value) on xmax; more: further lines."""
    return f"""mesh: {{type: box, elements: [{n}, {n}, {n}]}}
order: {order}
problem:
  rhs: "0"
  boundary:
    - {{tags: [xmin], type: dirichlet, value: 0}}
    - {{tags: [xmax], type: robin, alpha: "{alpha}", value: {value}}}
""" + more


def refused(name, text, np, want, label):
    """The case name.yaml (text) on np ranks: exit status 2, the message
    want behind the file's name on stderr, no output folder."""
    path = os.path.join(work, name + ".yaml")
    open(path, "w").write(text)
    out, p = run(path, [], np, expect_rc=2)
    if out is not None:
        want = f"{name}.yaml: {want}"
        if want not in p.stderr:
            fail.append(f"{label}: stderr {p.stderr!r} lacks {want!r}")
        if os.path.exists(out):
            fail.append(f"{label}: output folder {out} was created")


def neumann():
    case = os.path.join(src, "configs/neumann_box.yaml")
    base = ["mesh.elements=[4,4,4]", "order=5", "solver.max_iterations=2000"]
    variants = [["preconditioner.type=jacobi"], ["preconditioner.type=asm"],
                ["preconditioner.type=asm", "preconditioner.precision=fp32"],
                ["preconditioner.type=pmg"], ["preconditioner.type=pmg", "preconditioner.precision=fp64"],
                ["preconditioner.type=pmg", "preconditioner.smoother.type=jacobi"],
                ["preconditioner.type=pmg", "preconditioner.smoother.type=asm"],
                ["preconditioner.type=pmg", "preconditioner.smoother.type=cheby-jacobi"],
                ["preconditioner.type=pmg", "preconditioner.smoother.type=ras", "solver.type=fcg"],
                ["preconditioner.type=pmg", "preconditioner.smoother.type=cheby-ras", "solver.type=fcg"],
                ["preconditioner.type=pmg", "preconditioner.coarse.operator=fem"],
                ["preconditioner.type=pmg", "solver.type=pcg1"]]
    for i, v in enumerate(variants):
        # jacobi on 1 rank; asm and the default pmg on 1-3; the other pmg variants on 2
        for np in ((1,) if i == 0 else (1, 2, 3) if i in (1, 2, 3) else (2,)):
            s, p = run(case, base + v, np)
            if not s:
                continue
            print(f"neumann {' '.join(x.split('=', 1)[1] for x in v)} np{np}: {its(s)} iterations, L2 {l2(s):.3e}, "
                  f"defect {s['nullspace']['defect']:.1e}")
            if not l2(s) < 1e-6:
                fail.append(f"neumann {v} np{np}: L2 {l2(s):.3e}")
            if not s["nullspace"]["defect"] < 1e-12:
                fail.append(f"neumann {v} np{np}: defect {s['nullspace']['defect']}")
            if "not compatible" in p.stderr:
                fail.append(f"neumann {v} np{np}: warned: {p.stderr.strip()[:300]}")
    eh = [l2(run(case, [f"mesh.elements=[{ne},{ne},{ne}]", "order=3", "solver.tol=1e-12"])[0]) for ne in (4, 8)]
    rate = math.log2(eh[0] / eh[1])
    print(f"neumann p = 3, 4/8 elements, L2 {eh[0]:.3e} {eh[1]:.3e}, rate {rate:.2f}")
    if not rate >= 3.5:
        fail.append(f"neumann: h rate {rate:.2f} < 3.5")
    ep = [l2(run(case, ["mesh.elements=[3,3,3]", f"order={p}", "solver.tol=1e-12"])[0]) for p in range(2, 7)]
    print("neumann 3^3, p = 2..6, L2:", " ".join(f"{e:.3e}" for e in ep))
    for i in range(len(ep) - 1):
        if ep[i] > 1e-9 and not ep[i + 1] < ep[i] / 5:
            fail.append(f"neumann: p = {i + 2} -> {i + 3}: L2 {ep[i]:.3e} -> {ep[i + 1]:.3e} (not / 5)")
    s0, _ = run(case, base)
    zero = {"lambda 0*x": ["problem.lambda=0*x"],
            "robin alpha x on xmin": ['problem.boundary=[{tags: [xmin], type: robin, alpha: "x", value: 0}, '
                                      '{tags: [xmax, ymin, ymax, zmin, zmax], type: neumann, value: 0}]']}
    for what, v in zero.items():
        s, p = run(case, base + v, 2)
        if not (s and s0):
            continue
        print(f"neumann, {what}: {its(s)} iterations, L2 {l2(s):.3e}, projected {s['nullspace']['projected']}")
        if not s["nullspace"]["projected"] or abs(l2(s) - l2(s0)) > 1e-6 * l2(s0):
            fail.append(f"neumann, {what}: projected {s['nullspace']['projected']}, L2 {l2(s):.6e} vs {l2(s0):.6e}")
    deform = ["mesh.elements=[3,3,3]", "order=4", "mesh.deform=0.05", "solver.tol=1e-12"]
    sj, _ = run(case, deform + ["preconditioner.type=jacobi", "solver.max_iterations=3000"])
    for prec in ("fp64", "fp32"):
        ss, _ = run(case, deform + ["operator.geometry=split", f"preconditioner.precision={prec}"])
        if ss and sj:
            print(f"neumann deformed, split geometry, pmg {prec}: {its(ss)} iterations, L2 {l2(ss):.6e} "
                  f"(jacobi fp64 geometry {l2(sj):.6e}), {ss['operator']['elements_split']} split elements")
            if not ss["operator"]["elements_split"] > 0 or abs(l2(ss) - l2(sj)) > 1e-6 * l2(sj):
                fail.append(f"neumann split {prec}: L2 {l2(ss):.9e} vs {l2(sj):.9e}")
    s2, _ = run(case, base + ["problem.exact=cos(pi*x)*cos(pi*y)*cos(pi*z) + 2"])
    if s0 and s2:
        if abs(l2(s0) - l2(s2)) > 1e-6 * l2(s0) or abs(s2["nullspace"]["exact_mean"] - 2) > 1e-10:
            fail.append(f"neumann shifted exact: L2 {l2(s0)} vs {l2(s2)}, exact_mean {s2['nullspace']['exact_mean']}")
    s, p = run(case, base + ["problem.rhs=3*pi^2*cos(pi*x)*cos(pi*y)*cos(pi*z) + 1"])
    if s:
        print(f"neumann incompatible (rhs + 1): {its(s)} iterations, defect {s['nullspace']['defect']:.3e}")
        if not s["nullspace"]["defect"] > 1e-3:
            fail.append(f"incompatible data: defect {s['nullspace']['defect']}")
        if "not compatible" not in p.stderr:
            fail.append(f"incompatible data: no warning on stderr: {p.stderr!r}")


def neumann_ranks():
    case = os.path.join(src, "configs/neumann_box.yaml")
    for el in ("[1,1,2]", "[2,1,1]", "[1,2,1]"):
        base = [f"mesh.elements={el}", "mesh.partitioner=metis", "order=5", "solver.max_iterations=500"]
        ref, _ = run(case, base + ["preconditioner.precision=fp64"], 2)
        for v in ([], ["preconditioner.cycle=additive"], ["preconditioner.coarse.operator=fem"]):
            s, _ = run(case, base + v, 2)
            if not (s and ref):
                continue
            rel = abs(l2(s) - l2(ref)) / l2(ref)
            print(f"neumann {el} metis np2, pmg fp32 {' '.join(v)}: {its(s)} iterations, L2 {l2(s):.9e} "
                  f"(fp64 {its(ref)} iterations, {l2(ref):.9e}), relative difference {rel:.1e}")
            if not rel < 1e-6:
                fail.append(f"neumann {el} np2 {v}: L2 {l2(s):.9e} vs fp64 {l2(ref):.9e}")


if which in ("robin", "all"):
    robin()
if which in ("neumann", "all"):
    neumann()
if which in ("neumann-ranks", "all"):
    neumann_ranks()
if fail:
    print("FAILED:\n" + "\n".join(fail))
    sys.exit(1)
print(f"robin and neumann checks ok ({which})")
