#!/usr/bin/python3
"""Performance model of one Jacobi-PCG iteration, for scaling predictions.

The streaming model of `hexcg bench stream` (docs/benchmarks.md): a kernel
that moves B bytes takes T(B) = T0 + B / Wmax. One PCG iteration on n DOFs
per rank runs K such kernels that move b(n) bytes in all, plus, on more than
one rank, two allreduces and one halo exchange:

    t(n, P) = K T0 + b(n) / Wmax                       (streaming, per rank)
            + [P > 1] (A t_allreduce + m lat + h(n) / bw)   (communication)

with A = 2 allreduces for PCG, 1 for single-reduction CG (pcg1, SOLVERS:
more bytes and kernels, one allreduce less; pcg1_crossover gives the
per-rank size below which it wins).

    b(n)  = n (BYTES_G + BYTES_L r),   r = ((p + 1) / p)^3  (L-nodes per G-node)
    h(n)  = 48 n^(2/3)   (six faces of a cube of n nodes, 8 bytes a node)
    m     = min(P - 1, 26) messages

T0 and Wmax come from stream_fit.yaml (the copy, BS1, unless told; Wmax is
the fit's aggregate divided by its ranks: a rank's share), lat, bw
and t_allreduce from `hexcg bench comm` (comm.yaml). The efficiency at n
DOFs per rank, measured against an infinitely large per-rank problem, is

    E(n) = (b(n) / Wmax) / t(n, P),

and n_0.8 solves E(n) = 0.8. Without the halo's bandwidth term t is
a + c n, and n_0.8 = 4 a / c in closed form: the B_0.8 = 4 T0 Wmax of the
seed for the whole iteration (a = K T0 + comm latencies, c = b(n) / (n Wmax)).
With it, n_0.8 is found by bisection.

Usage as a script:
    model.py --fit stream_fit.yaml [--comm comm.yaml] [--order P] [--ranks P]
prints the model's parameters, n_0.8 and t(n) at a few sizes.
"""
import argparse
import math
import sys

# Bytes per iteration per G-node and per L-node (docs/scaling.md "The model"):
# G-vectors: scatter reads u (8), gather writes w (8), the update fused with
# Jacobi reads x, p, r, w, 1/d and writes x, r, z with r.r and r.z (64),
# p = z + b p (24). (Before Jacobi was fused: 128, with z = d r and r.z apart.)
# L-nodes: scatter writes and gather reads an L-vector with an int32 index (24),
# the element operator reads u_L and 6 geometric factors, writes w_L (64).
BYTES_G = 104.0
BYTES_L = 88.0
KERNELS = 7  # scatter, operator, gather, its p.Ap sum, fused update, the sums' fetch, p update
ALLREDUCES = 2
# The CG variants (solver.type): G-node bytes, kernels, allreduces per iteration.
# pcg1 (single reduction, Chronopoulos-Gear): the fused update with s for w (64),
# w.u (16), p = u + b p and s = w + b s (48) on top of scatter and gather (16).
SOLVERS = {
    "pcg": {"bytes_g": BYTES_G, "kernels": KERNELS, "allreduces": ALLREDUCES},
    "pcg1": {"bytes_g": 144.0, "kernels": 8, "allreduces": 1},
}


class Model:
    def __init__(self, t0, wmax, order=7, lat=0.0, bw=math.inf, t_allreduce=0.0, kernels=KERNELS,
                 bytes_g=BYTES_G, bytes_l=BYTES_L, allreduces=ALLREDUCES):
        if not (t0 >= 0 and wmax > 0):
            raise ValueError(f"need t0 >= 0 and wmax > 0 (got {t0}, {wmax})")
        self.t0, self.wmax, self.order = float(t0), float(wmax), int(order)
        self.lat, self.bw, self.t_allreduce = float(lat), float(bw), float(t_allreduce)
        self.kernels, self.bytes_g, self.bytes_l = kernels, bytes_g, bytes_l
        self.allreduces = allreduces

    def for_solver(self, name):
        """The same machine running another CG variant (SOLVERS)."""
        v = SOLVERS[name]
        return Model(self.t0, self.wmax, self.order, self.lat, self.bw, self.t_allreduce, kernels=v["kernels"],
                     bytes_g=v["bytes_g"], bytes_l=self.bytes_l, allreduces=v["allreduces"])

    def bytes_per_dof(self):
        r = ((self.order + 1.0) / self.order) ** 3
        return self.bytes_g + self.bytes_l * r

    def t_stream(self, n):
        return self.kernels * self.t0 + n * self.bytes_per_dof() / self.wmax

    def t_comm(self, n, ranks):
        if ranks <= 1:
            return 0.0
        m = min(ranks - 1, 26)
        halo = 48.0 * n ** (2.0 / 3.0)
        return self.allreduces * self.t_allreduce + m * self.lat + (halo / self.bw if self.bw > 0 else 0.0)

    def t_iter(self, n, ranks):
        """Predicted seconds per PCG iteration with n DOFs per rank on ranks ranks."""
        return self.t_stream(n) + self.t_comm(n, ranks)

    def efficiency(self, n, ranks):
        """Streaming time of the DOFs over the whole time: 1 for large n."""
        return (n * self.bytes_per_dof() / self.wmax) / self.t_iter(n, ranks)

    def n08_closed_form(self, ranks):
        """4 a / c, ignoring the halo's bandwidth term."""
        m = min(ranks - 1, 26) if ranks > 1 else 0
        a = self.kernels * self.t0 + (self.allreduces * self.t_allreduce + m * self.lat if ranks > 1 else 0.0)
        return 4.0 * a / (self.bytes_per_dof() / self.wmax)

    def n08(self, ranks, target=0.8):
        """DOFs per rank where efficiency(n) = target (bisection in log n)."""
        lo, hi = 1e-3, 1.0
        if self.efficiency(lo, ranks) >= target:
            return lo
        while self.efficiency(hi, ranks) < target:
            hi *= 2.0
            if hi > 1e18:
                return math.inf
        for _ in range(200):
            mid = math.sqrt(lo * hi)
            if self.efficiency(mid, ranks) < target:
                lo = mid
            else:
                hi = mid
            if hi / lo - 1.0 < 1e-12:
                break
        return 0.5 * (lo + hi)

    def strong_efficiency(self, dofs, ranks, ranks0):
        """Predicted strong-scaling efficiency t(N/P0) P0 / (t(N/P) P), as collect.py measures it."""
        t0 = self.t_iter(dofs / ranks0, ranks0)
        return t0 * ranks0 / (self.t_iter(dofs / ranks, ranks) * ranks)


def pcg1_crossover(m):
    """DOFs per rank below which pcg1 (one allreduce) beats pcg (two) on more
    than one rank: where the saved allreduce outweighs pcg1's extra bytes and
    launches, t_allreduce = dK T0 + n dB / Wmax (0 when it never does)."""
    a, b = m.for_solver("pcg"), m.for_solver("pcg1")
    saved = (a.allreduces - b.allreduces) * m.t_allreduce - (b.kernels - a.kernels) * m.t0
    if saved <= 0:
        return 0.0
    return saved * m.wmax / (b.bytes_g - a.bytes_g)


def load_yaml(path):
    import yaml

    with open(path) as f:
        return yaml.safe_load(f) or {}


def from_files(fit_path, comm_path=None, order=7, kernel="BS1"):
    """A Model from stream_fit.yaml (kernel: BS1 copy by default) and comm.yaml."""
    fit = load_yaml(fit_path)
    k = (fit.get("kernels") or {}).get(kernel)
    if not k:
        raise ValueError(f"{fit_path}: no kernel {kernel} under 'kernels:'")
    # the fit's bandwidth is summed over its ranks: a rank's share when all of them stream
    t0, wmax = float(k["t0_seconds"]), float(k["wmax_gbps"]) * 1e9 / max(int(fit.get("ranks", 1)), 1)
    lat, bw, tar = 0.0, math.inf, 0.0
    if comm_path:
        c = load_yaml(comm_path)
        lat = float(c.get("latency_s", 0.0))
        bwg = float(c.get("bandwidth_gbps", 0.0))
        bw = bwg * 1e9 if bwg > 0 else math.inf
        tar = float(c.get("allreduce_s", 0.0))
    return Model(t0, wmax, order=order, lat=lat, bw=bw, t_allreduce=tar)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", required=True, help="stream_fit.yaml of hexcg bench stream")
    ap.add_argument("--comm", help="comm.yaml of hexcg bench comm")
    ap.add_argument("--order", type=int, default=7)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--kernel", default="BS1", help="stream kernel whose T0/Wmax stand for all (BS1)")
    a = ap.parse_args(argv[1:])
    try:
        m = from_files(a.fit, a.comm, a.order, a.kernel)
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.stderr.write(f"model.py: {e}\n")
        return 2
    print(f"T0 {m.t0:.3e} s, Wmax {m.wmax / 1e9:.2f} GB/s, {m.bytes_per_dof():.1f} bytes/DOF/iteration, "
          f"K {m.kernels}; allreduce {m.t_allreduce:.3e} s, latency {m.lat:.3e} s, bw {m.bw / 1e9:.2f} GB/s")
    print(f"n_0.8 on {a.ranks} ranks: {m.n08(a.ranks):.4g} DOFs per rank "
          f"(closed form without the halo bandwidth: {m.n08_closed_form(a.ranks):.4g})")
    m1 = m.for_solver("pcg1")
    for n in (1e3, 1e4, 1e5, 1e6, 1e7):
        print(f"  n {n:9.0f}: t {m.t_iter(n, a.ranks):.3e} s/iteration, E {m.efficiency(n, a.ranks):.3f}; "
              f"pcg1 {m1.t_iter(n, a.ranks):.3e} s ({m.t_iter(n, a.ranks) / m1.t_iter(n, a.ranks):.2f}x)")
    print(f"pcg1 (one allreduce) is faster than pcg below {pcg1_crossover(m):.4g} DOFs per rank "
          f"(on more than one rank)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
