"""Whether two gnn-run summaries (JSON files) report the same outputs and
gradients: every summary number (sum, abs_sum, min, max, first elements)
equal within a relative 1e-12 (the sums may add in another order; the
non-finite, null or "nan"/"inf"/"-inf", equal). Prints
"same N" (N numbers compared) or the first difference, and exits 1."""
import json
import sys

a, b = (json.load(open(p)) for p in sys.argv[1:3])
count = 0
for part in ("outputs", "gradients"):
    xs, ys = a.get(part, []), b.get(part, [])
    if len(xs) != len(ys):
        sys.exit(f"{part}: {len(xs)} against {len(ys)}")
    for k, (x, y) in enumerate(zip(xs, ys)):
        if x["shape"] != y["shape"]:
            sys.exit(f"{part}[{k}]: shape {x['shape']} against {y['shape']}")
        for key in ("sum", "abs_sum", "min", "max", "first"):
            u = x[key] if isinstance(x[key], list) else [x[key]]
            v = y[key] if isinstance(y[key], list) else [y[key]]
            for p, q in zip(u, v):
                count += 1
                # (null, "nan", "inf", "-inf": non-finite, equal or not)
                numbers = all(isinstance(z, (int, float)) for z in (p, q))
                if (p != q) if not numbers else abs(p - q) > 1e-12 * (1 + abs(p)):
                    sys.exit(f"{part}[{k}].{key}: {p} against {q}")
print("same", count)
