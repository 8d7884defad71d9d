#!/usr/bin/env python3
"""table.py DIR: medians over rounds of OSU put/get latency and put_mr rate, per set-up."""
import sys, glob, re, statistics, os
d = sys.argv[1]
def val(f, size):
    for l in open(f, errors='replace'):
        w = l.split()
        if len(w) >= 2 and w[0] == str(size):
            try: return float(w[1])
            except ValueError: pass
    return None
setups = ['direct', 'shmfab', 'tcp', 'ompi']
names = {'direct': 'ofishmem direct (default)', 'shmfab': 'ofishmem SHMEM_DIRECT=0 (libfabric shm)',
         'tcp': 'ofishmem tcp;ofi_rxm (lo)', 'ompi': 'Open MPI 4.1.4 OSHMEM (UCX)'}
rows = [('put', 8, 'us'), ('put', 4096, 'us'), ('put', 1 << 20, 'us'),
        ('get', 8, 'us'), ('get', 4096, 'us'), ('get', 1 << 20, 'us'),
        ('put_mr', 8, 'msg/s'), ('put_mr', 4096, 'msg/s'), ('put_mr', 1 << 20, 'msg/s')]
print('| measure | ' + ' | '.join(names[s] for s in setups) + ' |')
print('|---|' + '---|' * len(setups))
for p, sz, unit in rows:
    cells = []
    for s in setups:
        vs = [val(f, sz) for f in sorted(glob.glob(os.path.join(d, '%s.%s.r*.out' % (s, p))))]
        vs = [v for v in vs if v is not None]
        if not vs: cells.append('-'); continue
        m = statistics.median(vs)
        cells.append(('%.0f' % m if unit == 'msg/s' else '%.2f' % m) + ' (%s)' % ', '.join(('%.0f' if unit == 'msg/s' else '%.2f') % v for v in vs))
    label = '%s %s %s' % (p, ('%d B' % sz) if sz < 1024 else ('%d KiB' % (sz // 1024)) if sz < 1 << 20 else '1 MiB', unit)
    print('| ' + label + ' | ' + ' | '.join(cells) + ' |')
