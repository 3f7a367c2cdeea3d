"""Import a script's modules up front and say clearly which one is missing.

    import pyrequire; pyrequire.need("collect.py", ["yaml", "matplotlib"], "the plots")
    python3 scripts/pyrequire.py --prog P --for PURPOSE [--from WHERE] MODULE...   (scripts/python.sh)

A missing module is an error (exit 2) whose message names the module, the
interpreter (sys.executable, and HEXCG_PYTHON if that chose it) and the fix:
Debian's package (apt install python3-...), or HEXCG_PYTHON pointing at a
python3 that has it. Standard library only, so it runs under any python3."""
import argparse
import importlib
import os
import sys

# module -> (Debian package, pip package)
PACKAGES = {"yaml": ("python3-yaml", "PyYAML"), "matplotlib": ("python3-matplotlib", "matplotlib"),
            "numpy": ("python3-numpy", "numpy"), "h5py": ("python3-h5py", "h5py")}


def missing(modules):
    """(module, error text) of the first module that does not import, else None"""
    for m in modules:
        try:
            importlib.import_module(m)
        except Exception as e:  # an ImportError, or a broken install that raises something else
            return m, f"{type(e).__name__}: {e}"
    return None


def message(prog, module, err, why, where=None, extra=""):
    deb, pip = PACKAGES.get(module, (f"python3-{module}", module))
    if where is None:
        env = os.environ.get("HEXCG_PYTHON")
        where = f"the interpreter running {prog}; HEXCG_PYTHON={env}" if env else "the interpreter running " + prog
    return (f"{prog}: the Python module '{module}' ({why}) is missing in {sys.executable} ({where}): {err}\n"
            f"  fix: apt install {deb} (Debian's /usr/bin/python3, the default interpreter), or set "
            f"HEXCG_PYTHON to a python3 that has it (pip install {pip}){extra}\n")


def need(prog, modules, why, extra=""):
    """exit 2 with message() unless every module imports"""
    m = missing(modules)
    if m:
        sys.stderr.write(message(prog, m[0], m[1], why, extra=extra))
        sys.exit(2)


def main(argv):
    ap = argparse.ArgumentParser(prog="pyrequire.py")
    ap.add_argument("--prog", required=True)
    ap.add_argument("--for", dest="why", required=True)
    ap.add_argument("--from", dest="where")
    ap.add_argument("--hint", default="")
    ap.add_argument("modules", nargs="+")
    a = ap.parse_args(argv[1:])
    m = missing(a.modules)
    if m:
        sys.stderr.write(message(a.prog, m[0], m[1], a.why, a.where, a.hint))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
