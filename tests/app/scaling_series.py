"""What check_scaling.sh and check_slurm.sh share: the rows of the strong and
the weak series of jobs/scaling.sh on ranks 1,2 of the default box (8
elements, 8 per rank in the weak one), checked to hold the ranks and element
counts, efficiency 1 on one rank, and positive times and iteration counts."""
import csv


def series_rows(out):
    """{mode: the rows of OUT/MODE/scaling.csv} for the strong and the weak series, checked"""
    got = {}
    for mode, els in (("strong", ["8", "8"]), ("weak", ["8", "16"])):
        rows = list(csv.DictReader(open(f"{out}/{mode}/scaling.csv")))
        assert [r["ranks"] for r in rows] == ["1", "2"], (mode, rows)
        assert [r["elements"] for r in rows] == els, (mode, [r["elements"] for r in rows])
        assert abs(float(rows[0]["efficiency"]) - 1.0) < 1e-12, rows[0]
        assert all(float(r["t_per_iteration"]) > 0 and int(r["iterations"]) > 0 for r in rows), rows
        got[mode] = rows
    return got
