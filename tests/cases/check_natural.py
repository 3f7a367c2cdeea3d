#!/usr/bin/python3
"""A mesh tag that no problem.boundary entry names gets the natural
condition (kappa du/dn = 0): the run says so in its log and lists the tags
under natural_tags in summary.yaml (issue 54 point 6: it was silent); a case
that names every tag has neither; a --dry-run says it too."""
import os
import sys
from types import SimpleNamespace

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from harness import check, finish, hexcg, setup  # noqa: E402

a, W = setup(source=True)
os.environ["OMP_NUM_THREADS"] = "1"
case = os.path.join(a.source, "configs", "gmsh_two_materials.yaml")


def run(name, *sets, dry=False):
    args = ["run", case, "--output", name, "--force", "--set", "order=2"]
    for s in sets:
        args += ["--set", s]
    if dry:
        args.append("--dry-run")
    rc, so, se = hexcg(args)
    p = SimpleNamespace(returncode=rc, stdout=so, stderr=se)
    summary = None
    if not dry and p.returncode == 0:
        with open(os.path.join(W, name, "summary.yaml")) as f:
            summary = yaml.safe_load(f)
    return p, summary


NOTE = "boundary tag of the mesh has no condition in problem.boundary and gets the natural condition"
p, s = run("all")
check(p.returncode == 0, f"every tag named: exit {p.returncode} {p.stderr[-300:]}")
check(NOTE not in p.stdout and "natural condition kappa du/dn = 0:" not in p.stdout, "every tag named: no note")
check(s is not None and "natural_tags" not in s, "every tag named: no natural_tags in summary.yaml")

p, s = run("outlet", "problem.boundary.1=null")  # the outlet entry removed
check(p.returncode == 0, f"outlet left out: exit {p.returncode} {p.stderr[-300:]}")
check(f'1 {NOTE} kappa du/dn = 0: "outlet"' in p.stdout, f"outlet left out: the note {p.stdout[-600:]!r}")
check(s is not None and s.get("natural_tags") == ["outlet"], f"outlet left out: natural_tags {s and s.get('natural_tags')}")

p, s = run("two", "problem.boundary=[{tags: [inlet], type: dirichlet, value: 0}]")
check(p.returncode == 0 and 'have no condition in problem.boundary and get the natural condition kappa du/dn = 0: '
      '"outlet", "wall"' in p.stdout, f"outlet and wall left out: exit {p.returncode} {p.stdout[-600:]!r}")
check(s is not None and s.get("natural_tags") == ["outlet", "wall"], "outlet and wall: natural_tags")

p, _ = run("dry", "problem.boundary.1=null", dry=True)
check(p.returncode == 0 and '"outlet"' in p.stdout and "natural condition" in p.stdout,
      f"dry run: exit {p.returncode} {p.stdout[-600:]!r}")
finish("natural tags: ok")
