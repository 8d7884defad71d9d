#!/usr/bin/env python3
"""check.py RUNDIR...: sanity of every OSU output: full size ladder, positive numbers, no error lines."""
import sys, os, re, glob
EXPECT = {  # program -> (largest size, first size) ; None = no size column
 'put': (1<<20, 1), 'get': (1<<20, 1), 'put_nb': (1<<20, 1), 'get_nb': (1<<20, 1),
 'put_overlap': (1<<20, 1), 'put_mr': (1<<22, 1), 'put_mr_nb': (1<<22, 1), 'get_mr_nb': (1<<22, 1),
 'broadcast': (1<<20, 4), 'collect': (1<<20, 4), 'fcollect': (1<<20, 4), 'reduce': (1<<20, 4),
}
bad = 0
for d in sys.argv[1:]:
    summ = {}
    for l in open(os.path.join(d, 'summary.txt')):
        w = l.split(); summ[(w[1], w[2], w[3] if not w[3].startswith('rc=') else '')] = l.strip()
    for f in sorted(glob.glob(os.path.join(d, '*.out'))):
        name = os.path.basename(f)[:-4]
        prog, np_, arg = name.split('.')
        p = prog.replace('osu_oshm_', '')
        base = re.sub(r'_13$', '', p)
        txt = open(f, errors='replace').read()
        lines = txt.splitlines()
        probs = []
        rcm = [v for k, v in summ.items() if k[0] == prog and k[1] == np_ and (k[2] or 'noarg') == arg]
        if not rcm or 'rc=0 ' not in rcm[0]: probs.append('exit: ' + (rcm[0].split('rc=')[1].split()[0] if rcm else '?'))
        errl = [l for l in lines if re.search(r'error|abort|fail|warn|signal|timeout|\bERR', l, re.I)]
        if errl: probs.append('error lines: %r' % errl[:3])
        rows = [l.split() for l in lines if l.strip() and not l.startswith('#')]
        nums = []
        for r in rows:
            try: nums.append([float(x) for x in r[1:]] if not base in ('barrier','atomics') or base=='atomics' else [float(x) for x in r])
            except ValueError: probs.append('odd line %r' % ' '.join(r)); continue
        if base == 'atomics':
            if len(rows) != 12: probs.append('%d op rows, want 12' % len(rows))
            for r in rows:
                if len(r) != 3 or float(r[2]) <= 0 or (float(r[1]) <= 0 and float(r[2]) < 200): probs.append('bad row %r' % r)  # rate prints 0.00 when latency > 200 us
        elif base == 'barrier':
            if len(rows) != 1 or float(rows[0][0]) <= 0: probs.append('bad rows %r' % rows)
        else:
            mx, first = EXPECT[base]
            sizes = [int(r[0]) for r in rows if r[0].isdigit()]
            want = []; s = first
            while s <= mx: want.append(s); s *= 2
            if sizes != want: probs.append('sizes %s..%s (%d rows), want %d..%d' % (sizes[:1], sizes[-1:], len(sizes), first, mx))
            cols = [1] if base != 'put_overlap' else [4]  # overlap: the pure-comm column must be > 0
            for r in rows:
                if not r[0].isdigit(): continue
                for c in cols:
                    if len(r) <= c or float(r[c]) <= 0: probs.append('non-positive %r' % r); break
        st = 'OK ' if not probs else 'BAD'
        if probs: bad += 1
        print('%s %-40s %s' % (st, d.split('/')[-1] + '/' + name, '; '.join(probs[:4])))
sys.exit(1 if bad else 0)
