#!/usr/bin/env python3
"""Baseline for bench/ benchmark 1: a straightforward Python diff of two registry
snapshots (json + dict comparison), the same rules as ../shared/tools/refdiff.py
(SPEC section 2): new_server, version_added, removed (unless partial),
description/title/endpoints/status changed on each server's latest entry.

Usage: diff.py OLD NEW   -> one JSON line: {"counts": {...}, "partial": bool,
                            "load_s": float, "diff_s": float, "total_s": float}
"""
import gzip, json, sys, time


def load(path):
    raw = open(path, 'rb').read()
    if path.endswith('.gz'):
        raw = gzip.decompress(raw)
    data = json.loads(raw.decode('utf-8-sig'))
    if isinstance(data, dict) and 'servers' in data:
        data = data['servers']
    versions, latest = {}, {}
    for e in data:
        s = e.get('server', e)
        meta = (e.get('_meta') or s.get('_meta') or {}).get('io.modelcontextprotocol.registry/official', {})
        name, ver = s.get('name'), s.get('version') or (s.get('version_detail') or {}).get('version')
        if not name:
            continue
        versions[(name, ver)] = (s, meta)
        is_latest = meta.get('isLatest', meta.get('is_latest'))
        pub = meta.get('publishedAt') or meta.get('published_at') or ''
        cur = latest.get(name)
        if cur is None or (is_latest and not cur[2]) or (bool(is_latest) == cur[2] and pub > cur[3]):
            latest[name] = (s, meta, bool(is_latest), pub)
    return versions, latest


def endpoints(s):
    return sorted((r.get('type'), r.get('url')) for r in (s.get('remotes') or []))


def diff(old, new, partial_ratio=0.9):
    ov, ol = old
    nv, nl = new
    ev = []
    partial = len(nl) < partial_ratio * len(ol)
    for n in nl:
        if n not in ol:
            ev.append((n, 'new_server'))
    for (n, v) in nv:
        if (n, v) not in ov and n in ol:
            ev.append((n, 'version_added'))
    if not partial:
        for n in ol:
            if n not in nl:
                ev.append((n, 'removed'))
    for n, (s, meta, _, _) in nl.items():
        if n not in ol:
            continue
        os_, ometa = ol[n][0], ol[n][1]
        if (os_.get('description') or '') != (s.get('description') or ''):
            ev.append((n, 'description_changed'))
        if (os_.get('title') or '') != (s.get('title') or ''):
            ev.append((n, 'title_changed'))
        if endpoints(os_) != endpoints(s):
            ev.append((n, 'endpoints_changed'))
        if (ometa.get('status') or 'active') != (meta.get('status') or 'active'):
            ev.append((n, 'status_changed'))
    counts = {}
    for _, k in ev:
        counts[k] = counts.get(k, 0) + 1
    return {'counts': counts, 'events': len(ev), 'partial': partial}


if __name__ == '__main__':
    t0 = time.perf_counter()
    old = load(sys.argv[1])
    new = load(sys.argv[2])
    t1 = time.perf_counter()
    r = diff(old, new)
    t2 = time.perf_counter()
    r.update(load_s=round(t1 - t0, 3), diff_s=round(t2 - t1, 3), total_s=round(t2 - t0, 3))
    print(json.dumps(r, sort_keys=True))
