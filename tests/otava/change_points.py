"""Apache Otava's change points of plain lists of floats, for tests/otava.rs.

stdin:  {"series": [[float, ...], ...], "window": 50, "max_pvalue": 0.001, "min_magnitude": 0.0}
stdout: [[{"index": i, "forward_change": x, "pvalue": p}, ...], ...], one list per series.
"""
import json
import sys

from otava.analysis import compute_change_points


def main():
    request = json.load(sys.stdin)
    out = []
    for series in request["series"]:
        # A list, not a numpy array: Otava slices its windows only out of lists.
        cps, _ = compute_change_points(
            [float(v) for v in series],
            window_len=int(request["window"]),
            max_pvalue=float(request["max_pvalue"]),
            min_magnitude=float(request["min_magnitude"]),
        )
        out.append([{"index": int(c.index), "forward_change": float(c.stats.forward_rel_change()),
                     "pvalue": float(c.stats.pvalue)} for c in cps])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
