#!/usr/bin/env python3
"""Rewrite a CUDA source (.cu) into host C++ for the CUDA emulation build
(HEXCG_CUDA=EMU, docs/gpu-verification.md). Test-only: nothing of it ships.

    cu_rewrite.py IN.cu OUT.cc

The output keeps every line of the input on the same line (a `#line 1`
directive first names the .cu, so diagnostics, __LINE__ and sanitizer reports
point at the original). Four rewrites, found in the code with comments and
string literals masked out:

  * `K<<<cfg>>>(args)`        -> `::hxemu::launch(__FILE__, __LINE__, "K", K, ::hxemu::cfg(cfg), args)`
  * `__shared__ T n[A][B];`   -> `static char hxemu_k_n; T (&n)[A][B] = *::hxemu::shared<T[A][B]>(&hxemu_k_n, "n");`
  * `extern __shared__ T n[];`-> `T *n = (T *)::hxemu::dyn_shared();`
  * `__global__ ... __launch_bounds__(X, Y) f(...) {`
                              -> the bounds blanked, `HXEMU_ENTRY(X, Y);` after the `{`
                                 (`HXEMU_ENTRY(0)` without bounds): the launch
                                 checks the bounds before any thread runs
  * `#pragma unroll ...`      -> removed (GCC has no such pragma)

Everything else (__syncthreads, threadIdx, __global__, __device__, the
runtime API) is the forced-include header's (runtime/hxemu.h). Anything the
rewriter does not understand is an error naming the file and line."""
import os
import re
import sys


def mask(src):
    """src with comments and string/char literals replaced by spaces (newlines kept)."""
    out = list(src)
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if src[k] != "\n":
                    out[k] = " "
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if src[k] != "\n":
                    out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


class Rewriter:
    def __init__(self, path, src):
        self.path, self.src, self.m = path, src, mask(src)
        self.edits = []  # (start, end, text)

    def fail(self, pos, what):
        line = self.src.count("\n", 0, pos) + 1
        sys.exit(f"{self.path}:{line}: cu_rewrite: {what}")

    def match(self, pos, open_, close):
        """index just past the bracket matching the one at pos"""
        depth = 0
        for k in range(pos, len(self.m)):
            if self.m[k] == open_:
                depth += 1
            elif self.m[k] == close:
                depth -= 1
                if depth == 0:
                    return k + 1
        self.fail(pos, f"no matching '{close}'")

    def match_back(self, pos, open_, close):
        """index of the bracket open_ matching the close at pos"""
        depth = 0
        for k in range(pos, -1, -1):
            if self.m[k] == close:
                depth += 1
            elif self.m[k] == open_:
                depth -= 1
                if depth == 0:
                    return k
        self.fail(pos, f"no matching '{open_}'")

    def launches(self):
        for mt in re.finditer(r"<<<", self.m):
            lt = mt.start()
            k = lt - 1
            while k >= 0 and (self.m[k].isspace() or self.m[k] == "\\"):
                k -= 1
            end = k + 1
            if self.m[k] == ">":
                k = self.match_back(k, "<", ">") - 1
            while k >= 0 and (self.m[k].isalnum() or self.m[k] in "_:"):
                k -= 1
            start = k + 1
            name = self.src[start:end]
            if not re.match(r"[A-Za-z_:]", name) or "\n" in name:
                self.fail(lt, f"cannot read the kernel of this launch ('{name}')")
            gt = self.m.find(">>>", lt)
            if gt < 0:
                self.fail(lt, "'<<<' without '>>>'")
            p = gt + 3
            while p < len(self.m) and (self.m[p].isspace() or self.m[p] == "\\"):
                p += 1
            if self.m[p] != "(":
                self.fail(gt, "'>>>' not followed by the kernel's arguments")
            close = self.match(p, "(", ")") - 1
            empty = self.m[p + 1:close].strip() == ""
            qname = name.replace('"', '\\"')
            self.edits.append((start, start, f'::hxemu::launch(__FILE__, __LINE__, "{qname}", '))
            # whitespace between the pieces stays (a line continuation in a macro)
            self.edits.append((end, end, ", ::hxemu::cfg("))
            self.edits.append((lt, lt + 3, ""))
            self.edits.append((gt, gt + 3, ")"))
            self.edits.append((p, p + 1, "" if empty else ", "))

    def shared(self):
        for mt in re.finditer(r"\b(extern\s+)?__shared__\b", self.m):
            semi = self.m.find(";", mt.end())
            decl = self.src[mt.end():semi]
            mdecl = self.m[mt.end():semi]
            nl = "\n" * decl.count("\n")
            d = mdecl.rstrip()
            dims = ""
            while d.endswith("]"):
                o = d.rfind("[")  # dims hold no nested brackets here
                if o < 0:
                    self.fail(mt.start(), "unbalanced '[' in a __shared__ declaration")
                dims = d[o:] + dims
                d = d[:o].rstrip()
            mn = re.search(r"([A-Za-z_]\w*)$", d)
            if not mn:
                self.fail(mt.start(), "cannot read the name of this __shared__ declaration")
            name, typ = mn.group(1), " ".join(d[:mn.start()].split())
            if not typ:
                self.fail(mt.start(), "a __shared__ declaration without a type")
            dims = " ".join(dims.split())
            if mt.group(1):
                if dims != "[]":
                    self.fail(mt.start(), "extern __shared__ must be an unsized array")
                text = f"{typ} *{name} = ({typ} *)::hxemu::dyn_shared();{nl}"
            else:
                key = f"hxemu_k_{name}"
                ref = f"(&{name}){dims}" if dims else f"&{name}"
                text = (f'static char {key}; {typ} {ref} = *::hxemu::shared<{typ}{dims}>(&{key}, "{name}");{nl}')
            self.edits.append((mt.start(), semi + 1, text))

    def kernels(self):
        for mt in re.finditer(r"\b__global__\b", self.m):
            p = mt.end()
            bounds = "0"
            mb = re.compile(r"\b__launch_bounds__\s*\(").search(self.m, p)
            paren = self.m.find("(", p)
            if mb and mb.start() < paren:
                bend = self.match(mb.end() - 1, "(", ")")
                bounds = " ".join(self.src[mb.end():bend - 1].split())
                blank = "".join("\n" if ch == "\n" else " " for ch in self.src[mb.start():bend])
                self.edits.append((mb.start(), bend, blank))
                paren = self.m.find("(", bend)
            pend = self.match(paren, "(", ")")
            q = pend
            while q < len(self.m) and self.m[q].isspace():
                q += 1
            if self.m[q] == ";":
                continue  # a declaration
            if self.m[q] != "{":
                self.fail(mt.start(), "a __global__ function whose body does not follow its parameters")
            self.edits.append((q + 1, q + 1, f" HXEMU_ENTRY({bounds});"))

    def pragmas(self):
        for mt in re.finditer(r"^[ \t]*#[ \t]*pragma[ \t]+unroll\b[^\n]*", self.m, re.M):
            self.edits.append((mt.start(), mt.end(), ""))

    def run(self):
        self.launches()
        self.shared()
        self.kernels()
        self.pragmas()
        out, pos = [], 0
        for s, e, t in sorted(self.edits, key=lambda x: (x[0], x[1])):
            if s < pos:
                self.fail(s, "overlapping rewrites")
            out.append(self.src[pos:s])
            out.append(t)
            pos = e
        out.append(self.src[pos:])
        res = "".join(out)
        if res.count("\n") != self.src.count("\n"):
            self.fail(0, "internal error: the line count changed")
        return res


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: cu_rewrite.py IN.cu OUT.cc")
    path, outp = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        src = f.read()
    res = Rewriter(path, src).run()
    os.makedirs(os.path.dirname(os.path.abspath(outp)), exist_ok=True)
    with open(outp, "w", encoding="utf-8") as f:
        f.write(f'#line 1 "{path}"\n' + res)


if __name__ == "__main__":
    main()
