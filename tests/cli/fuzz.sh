#!/bin/sh
# Mutation fuzz of the two input readers (scenarios and their cards, via
# `specsim check`; calibration tables, via `specsim roofline --measured`):
# seeded random edits of the shipped files. Every case must end with exit 0
# or 2, never a crash or a sanitizer report (the suite also runs this on the
# ASan/UBSan build), and every exit-2 message must start with
# FILE:LINE:COLUMN. Deterministic: the same cases every run.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "skip fuzz: no python3"; exit 0; }
FUZZ_N=${FUZZ_N:-150}
python3 - "$SPECSIM" "$TMP" "$FUZZ_N" <<'PY'
import glob, random, re, subprocess, sys
specsim, tmp, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
TOKS = ['{', '}', '[', ']', ':', ',', '-', '"', "'", '#', '\n', '  ', '\t', '0', '-1',
        '1e309', 'nan', 'inf', '99999999999', 'ms', 'GiB', '/s', 'null', '~', '&a',
        '*a', '!!str', '%', 'tenants', 'groups', 'dist', 'base:', 'op: token',
        'batch: 0', 'q: 0', 'm: 0', 'context: -5']

def mutate(rng, text):
    for _ in range(rng.randint(1, 4)):
        p = rng.randrange(len(text) + 1)
        r = rng.random()
        if r < 0.45:
            text = text[:p] + rng.choice(TOKS) + text[p:]
        elif r < 0.8:
            text = text[:p] + text[p + rng.randint(1, 20):]
        else:
            q = rng.randrange(len(text) + 1)
            text = text[:p] + text[q:q + rng.randint(1, 30)] + text[p:]
    return text

def run(name, args, path):
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    err = r.stderr
    msg = err.strip().splitlines()[0] if err.strip() else ''
    ok = r.returncode in (0, 2) and 'Sanitizer' not in err and 'runtime error' not in err
    if ok and r.returncode == 2:
        body = re.sub(r'^specsim( \w+)?: ', '', msg)
        ok = re.search(r':\d+:\d+: ', body) is not None
    if not ok:
        # The temporary directory goes with the test: show the input itself.
        print('FAIL %s' % name)
        print('  exit %d: %s' % (r.returncode, err.strip()[-300:]))
        print('  input (%s): %r' % (' '.join(args[1:-1]), open(path).read()[:800]))
    return ok

rng = random.Random(20261129)
scen = sorted(glob.glob('scenarios/**/*.yaml', recursive=True))
tabs = sorted(glob.glob('results/calibration/*.yaml'))
bad = 0
for i in range(n):
    path = '%s/case%d.yaml' % (tmp, i)
    if i % 3 == 2 and tabs:
        open(path, 'w').write(mutate(rng, open(rng.choice(tabs)).read()))
        args = [specsim, 'roofline', '--measured', path]
    else:
        open(path, 'w').write(mutate(rng, open(rng.choice(scen)).read()))
        args = [specsim, 'check', path]
    bad += not run('fuzz_case_%d' % i, args, path)
print(('PASS' if bad == 0 else 'FAIL') + ' fuzz_%d_cases' % n)
PY
