"""Summarises sampler.c's files: self time by module, and inclusive time of
the frames of one module symbolised with llvm-symbolizer.
    python analyze.py SAMPLES [UNSTRIPPED_SO [thread]]
A perf.map beside SAMPLES (Python's perf trampolines) names the Python
frames."""
import bisect, collections, os, subprocess, sys

path = sys.argv[1]
so = sys.argv[2] if len(sys.argv) > 2 else None
want = sys.argv[3] if len(sys.argv) > 3 else None
pmap = os.path.join(os.path.dirname(path), "perf.map")
ranges = []
if os.path.exists(pmap):
    for line in open(pmap):
        a, sz, nm = line.rstrip("\n").split(" ", 2)
        ranges.append((int(a, 16), int(sz, 16), nm))
    ranges.sort()
starts = [r[0] for r in ranges]


def python_frame(addr):
    i = bisect.bisect_right(starts, addr) - 1
    if i >= 0 and addr < ranges[i][0] + ranges[i][1]:
        return ranges[i][2]
    return None


stacks = []
table = {}
for line in open(path):
    if line.startswith("@"):
        a, _, f = line[1:].strip().partition(" ")
        mod_off, _, sym = f.partition(":")
        mod, _, off = mod_off.partition("+")
        if mod == "?" and ranges:
            py = python_frame(int(a, 16))
            if py:
                mod, off, sym = "py", a, py
        table[a] = (mod, off, sym)
        continue
    tid, *addrs = line.split()
    if want and tid != want:
        continue
    stacks.append([table.get(a, ("?", a, "?")) for a in addrs])
n = len(stacks)
print(f"{n} samples")
self_mod = collections.Counter(s[0][0] for s in stacks if s)
for m, k in self_mod.most_common(12):
    print(f"  self {k / n:6.1%}  {m}")
names = {}
if so:
    offs = sorted({off for s in stacks for (m, off, _) in s if m.startswith("_gnnc")})
    res = subprocess.run(["llvm-symbolizer", "--obj=" + so, "--functions=linkage", "-C"],
                         input="\n".join(offs), capture_output=True, text=True).stdout
    blocks = [b.split("\n")[0] for b in res.strip().split("\n\n")]
    names = dict(zip(offs, blocks))
def name(fr):
    m, off, sym = fr
    if m.startswith("_gnnc"):
        return "gnnc:" + names.get(off, off)[:110]
    if m == "py":
        return sym[:120]
    return m.split(".so")[0] + ":" + (sym if sym != "?" else "?")
incl = collections.Counter()
selfn = collections.Counter()
for s in stacks:
    seen = set()
    for fr in s:
        nm = name(fr)
        if nm not in seen:
            incl[nm] += 1
            seen.add(nm)
    if s:
        selfn[name(s[0])] += 1
print("inclusive:")
for nm, k in incl.most_common(45):
    print(f"  {k / n:6.1%}  {nm}")
print("self:")
for nm, k in selfn.most_common(25):
    print(f"  {k / n:6.1%}  {nm}")
