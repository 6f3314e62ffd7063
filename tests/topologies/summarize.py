#!/usr/bin/python3
"""The pass rates of a generated-topology run (tests/topologies/run.sh).

    summarize.py SUITE_DIR EVAL_JSON SUMMARY_JSON [--min-rate R]

Reads `causeway eval --json`'s results and each topology's topology.json; prints the pass
rate overall, per mechanism on the truth path (a topology counts once for each), per shape
and per slow-stage kind, per variant of the event-loop server (its wait, transport, when it
accepts, its clients as processes or threads, its language and stage), the count of
"victim blamed" (the root cause is the hung node itself), the mismatch patterns (comms
replaced by their role in the topology) each with a replayable seed:index, and every miss.
Topologies whose driver failed (the topology did not behave: not causeway's miss) are
listed apart and left out of the rates. Exit 0 when the rate is at least R, 3 when below,
1 when nothing could be read.
"""
import argparse
import collections
import json
import os
import re
import sys


def role_of(topo):
    roles = {topo["sink"]: "SINK", topo["slow"]: "SLOW"}
    for n in topo["nodes"]:
        if n["name"] not in roles:
            roles[n["name"]] = "ON-PATH" if n["name"] in topo["path"] else "OFF-PATH"
    for n in topo["noise"]:
        roles[n["comm"]] = "NOISE"
    return roles


def pattern(line, roles):
    """A mismatch line with comms replaced by roles (repeats merged), numbers by N."""
    line = re.sub(r"does not pass through \[.*\] in that order", "misses the truth path", line)

    def comm(m):
        w = m.group(0)
        return roles.get(w, w)

    known = {"SINK", "SLOW", "ON-PATH", "OFF-PATH", "NOISE"}

    def merge(m):
        # Comms of no node (run.sh's own children before a node's exec) merge into "other".
        items = [w.strip() if w.strip() in known else "other" for w in m.group(1).split(",")]
        out = [w for k, w in enumerate(items) if k == 0 or w != items[k - 1]]
        return "[" + ", ".join(out) + "]"

    text = re.sub(r"[A-Za-z0-9_.:-]+", comm, line)
    text = re.sub(r"\[([^\]]*)\]", merge, text)
    text = re.sub(r"\b\d+(\.\d+)?\b", "N", text)
    return text


def lost_at(x):
    """Where the diagnosed path left the truth: the truth-path edges into the node nearest
    the slow one that the diagnosed path reached ("reached the slow node" when it did)."""
    t = x["topo"]
    on = [(e["from"], e["to"], e["mechanism"]) for e in t["edges"] if e["on_path"]]
    reached = set(x["path"]) | ({x["root"]} if x["root"] else set())
    if t["slow"] in reached:
        return "reached the slow node"
    # Distance from the slow node along truth-path edges.
    dist, frontier = {t["slow"]: 0}, [t["slow"]]
    while frontier:
        v = frontier.pop(0)
        for u, d, _ in on:
            if u == v and d not in dist:
                dist[d] = dist[v] + 1
                frontier.append(d)
    cands = [v for v in reached if v in dist]
    if not cands:
        return "reached no truth-path node"
    deepest = min(cands, key=lambda v: dist[v])
    return "lost at " + "/".join(sorted({m for u, d, m in on if d == deepest}))


def server_variants(topo):
    """The event-loop server's variants a topology has (none without a server)."""
    s = topo.get("server")
    if not s:
        return []
    return [f"wait {s['wait']}", f"transport {s['transport']}", f"accept {s['accept']}",
            f"clients {s['clients']}", f"server {s['lang']}", f"stage {topo['stage']}",
            f"{len(s['queued'])} queued"]


def rate(p, n):
    return f"{p}/{n} ({100.0 * p / n:.0f} %)" if n else "0/0"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("suite")
    ap.add_argument("results")
    ap.add_argument("summary")
    ap.add_argument("--min-rate", type=float, default=0.0)
    a = ap.parse_args()
    try:
        with open(a.results) as f:
            results = json.load(f)
    except (OSError, ValueError) as e:
        print(f"summarize.py: cannot read {a.results}: {e}", file=sys.stderr)
        return 1
    rows = []
    for r in results.get("scenarios", []):
        with open(os.path.join(a.suite, r["name"], "topology.json")) as f:
            topo = json.load(f)
        w = r.get("with_rules") or {}
        err = r.get("error")
        driver_failed = bool(err) and "scenario's command failed" in err
        root = (w.get("root_cause") or "").split(" ")[0]
        lost_events = ""
        log = (r.get("trace") or "")[: -len(".cwt")] + ".record.log"
        if os.path.exists(log):
            with open(log, errors="replace") as f:
                m = re.search(r"([0-9]+) events LOST", f.read())
                lost_events = m.group(1) if m else ""
        rows.append(dict(name=r["name"], topo=topo, lost_events=lost_events, passed=r["passed"], error=err,
                         driver_failed=driver_failed, mismatches=w.get("mismatches", []),
                         root=root, hang=w.get("hang", ""), path=w.get("path", []),
                         trace=r.get("trace")))
    ran = [x for x in rows if not x["driver_failed"]]
    passed = sum(x["passed"] for x in ran)
    by = {"mechanism": collections.defaultdict(lambda: [0, 0]),
          "shape": collections.defaultdict(lambda: [0, 0]),
          "stage": collections.defaultdict(lambda: [0, 0]),
          "threads": collections.defaultdict(lambda: [0, 0]),
          "server variant": collections.defaultdict(lambda: [0, 0])}
    for x in ran:
        t = x["topo"]
        keys = {"mechanism": t["path_mechanisms"], "shape": [t["shape"]], "stage": [t["stage"]],
                "threads": ["with threads" if any(n["thread"] for n in t["nodes"])
                            else "processes only"],
                "server variant": server_variants(t)}
        for k, vals in keys.items():
            for v in vals:
                by[k][v][1] += 1
                by[k][v][0] += x["passed"]
    lost = collections.Counter(lost_at(x) for x in ran if not x["passed"] and not x["error"])
    victim = [x for x in ran if x["root"] and x["root"] == (x["hang"].split(" ") or [""])[0]]
    patterns = collections.defaultdict(list)
    for x in ran:
        if x["passed"]:
            continue
        roles = role_of(x["topo"])
        lines = x["mismatches"] or [f"error: {x['error']}"]
        for line in lines:
            patterns[pattern(line, roles)].append(x)

    seed_of = lambda x: f"{x['topo']['seed']}:{x['topo']['index']}"
    print(f"\ntopologies: {len(rows)}, ran: {len(ran)}, driver failures: {len(rows) - len(ran)}")
    print(f"pass rate: {rate(passed, len(ran))}")
    print(f"victim blamed (root cause = the hung node): {len(victim)}")
    lossy = [x for x in ran if x["lost_events"]]
    print(f"recordings that lost events: {len(lossy)} "
          f"({sum(not x['passed'] for x in lossy)} of them missed)")
    for k in ("shape", "stage", "threads", "mechanism", "server variant"):
        if not by[k]:
            continue
        print(f"\nper {k}:")
        for v, (p, n) in sorted(by[k].items(), key=lambda kv: (kv[1][0] / kv[1][1], kv[0])):
            print(f"  {v:18} {rate(p, n)}")
    print("\nwhere the diagnosed path left the truth (misses with a diagnosis):")
    for k, c in lost.most_common():
        print(f"  {c:4}  {k}")
    print("\nmismatch patterns (SLOW = the slow node, SINK = the hung node), most common first:")
    for pat, xs in sorted(patterns.items(), key=lambda kv: -len(kv[1])):
        mechs = collections.Counter(m for x in xs for m in x["topo"]["path_mechanisms"])
        print(f"  {len(xs):4}  {pat}\n        e.g. {seed_of(xs[0])} ({xs[0]['name']}); "
              f"mechanisms: {', '.join(f'{m} {c}' for m, c in mechs.most_common(6))}")
    print("\nmisses:")
    for x in ran:
        if x["passed"]:
            continue
        t = x["topo"]
        srv = (f", server: {', '.join(server_variants(t))}" if t.get("server") else "")
        print(f"  {seed_of(x)} {x['name']} [{t['stage']} on {t['slow']}, sink {t['sink']}, "
              f"path {' → '.join(t['path'])}{srv}]: {'' if x['error'] else lost_at(x)}\n"
              f"    diagnosed path: {' → '.join(x['path'])}\n    replay: {t['replay']}")
        if x["lost_events"]:
            print(f"    (the recording lost {x['lost_events']} events)")
        for line in x["mismatches"] or [f"error: {x['error']}"]:
            print(f"    - {line}")
    if len(rows) != len(ran):
        print("\ndriver failures (the topology did not behave; not counted):")
        for x in rows:
            if x["driver_failed"]:
                print(f"  {seed_of(x)} {x['name']}: {x['error']}")
    summary = {
        "topologies": len(rows), "ran": len(ran), "passed": passed,
        "rate": passed / len(ran) if ran else 0.0, "victim_blamed": len(victim),
        "lost_events": [seed_of(x) for x in lossy],
        "lost_at": dict(lost),
        "driver_failures": [seed_of(x) for x in rows if x["driver_failed"]],
        "per": {k: {v: {"passed": p, "total": n} for v, (p, n) in d.items()} for k, d in by.items()},
        "patterns": [{"pattern": pat, "count": len(xs), "examples": [seed_of(x) for x in xs[:5]]}
                     for pat, xs in sorted(patterns.items(), key=lambda kv: -len(kv[1]))],
        "misses": [{"topology": seed_of(x), "name": x["name"], "replay": x["topo"]["replay"],
                    "mismatches": x["mismatches"], "error": x["error"], "trace": x["trace"],
                    "path_mechanisms": x["topo"]["path_mechanisms"]}
                   for x in ran if not x["passed"]],
    }
    with open(a.summary, "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    print(f"\nsummary: {a.summary}")
    r = summary["rate"]
    if r < a.min_rate:
        print(f"FAIL: pass rate {r:.3f} below --min-rate {a.min_rate}")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
