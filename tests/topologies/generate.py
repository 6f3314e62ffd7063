#!/usr/bin/python3
"""Generates random program topologies with one slow stage, and their ground truth.

    generate.py --seed S --count N --out DIR [--load] [--only-mechanism M] [--node BIN]
    generate.py --seed S --index I --out DIR [...]        one topology (a replay)

Each topology is DIR/NNN-<shape>-<mechanisms>/, a scenario of `causeway eval --suite DIR`
(tests/scenarios/README.md): scenario.json (the truth, written from the topology before
anything runs), topology.json (what eval does not read: the seed, the index, the shape, the
nodes, the edges and their mechanisms), run.sh (the driver) and the nodes: symlinks to
cw-topo-node named after the node (its comm), *.spec files, and copies of node.py and
node.sh named after their node. Topology I of seed S depends on (S, I) alone
(random.Random(f"{S}:{I}"), and random.Random(f"{S}:{I}:server8") for the event-loop
server), and on --load and --only-mechanism, which the replay line repeats.
tests/topologies/README.md says what the topologies are.
"""
import argparse
import copy
import json
import os
import random
import shutil
import stat
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Each edge U→D is one mechanism: D's wait is ended by U. `u`/`d`: the languages that can
# play that side. `same`: whether U and D may ("any"), must ("required") or must not
# ("never") be threads of one process. `u_single`: U must be a process of its own (the
# edge ends at its exit). `wait`: D forks U (U's only out-edge). `res`: what run.sh makes.
ALL = {"c", "py", "sh"}
CPY = {"c", "py"}
C = {"c"}


def mech(u, d, res, same="any", u_single=False, wait=False, lock=False):
    return dict(u=u, d=d, res=res, same=same, u_single=u_single, wait=wait, lock=lock)


MECHANISMS = {
    "pipe": mech(ALL, ALL, "fifo"),
    "pipefull": mech(CPY, CPY, "fifo"),
    "unix": mech(CPY, CPY, None),
    "tcp": mech(CPY, CPY, None),
    "accept": mech(CPY, CPY, None),
    "eof-close": mech(ALL, CPY, "fifo"),
    "eof-exit": mech(ALL, CPY, "fifo", same="never", u_single=True),
    "futex": mech(C, C, "shm"),
    "mutex": mech(C, C, "shm", lock=True),
    "cond": mech(C, C, "shm"),
    "sem": mech(C, C, "shm"),
    "flock-unlock": mech(CPY, CPY, "lock", lock=True),
    "flock-close": mech(CPY, CPY, "lock", lock=True),
    "flock-exit": mech(CPY, CPY, "lock", same="never", u_single=True, lock=True),
    "fcntl-unlock": mech(CPY, CPY, "lock", same="never", lock=True),
    "fcntl-close": mech(CPY, CPY, "lock", same="never", lock=True),
    "fcntl-exit": mech(CPY, CPY, "lock", same="never", u_single=True, lock=True),
    "ofd-unlock": mech(C, C, "lock", lock=True),
    "ofd-close": mech(C, C, "lock", lock=True),
    "ofd-exit": mech(C, C, "lock", same="never", u_single=True, lock=True),
    "wait4": mech(ALL, ALL, None, same="never", u_single=True, wait=True),
    "waitid": mech(ALL, C, None, same="never", u_single=True, wait=True),
    "pidfd": mech(ALL, C, None, same="never", u_single=True, wait=True),
    "poll": mech(ALL, CPY, "fifo"),
    "poll-loop": mech(ALL, CPY, "fifo"),
    "epoll": mech(ALL, CPY, "fifo"),
    "epoll-loop": mech(ALL, CPY, "fifo"),
    "select": mech(ALL, CPY, "fifo"),
    "select-loop": mech(ALL, CPY, "fifo"),
    "readt": mech(ALL, {"sh"}, "fifo"),
    "sigwaitinfo": mech(CPY, CPY, None),
    "sigsuspend": mech(CPY, C, None),
    "signalfd": mech(CPY, C, None),
    "inotify": mech(ALL, C, "dir"),
    "eventfd": mech(C, C, "eventfd", same="required"),
}

# The event-loop server (README.md, "The event-loop server"): the slow node S is a
# single-threaded server waiting in epoll, poll or select for its clients on sockets. Its
# requester R (one of its upstreams) sends a request S works on (the slow stage); each
# queued client Q (its downstreams on the answer edges) sends its own request while S
# works and waits in recv for the answer S gives only after R's. Both edges R→S and S→Q
# are `server-WAIT`; the generator never picks these for an edge on its own: it turns a
# topology into a server one (make_server), with its own random stream, so that the
# topologies it leaves alone are those of the generator without servers.
SERVERS = {f"server-{w}": mech(CPY, CPY, None) for w in ("epoll", "poll", "select")}
SERVER_RATE = 0.4  # the share of topologies turned into server ones when they can be
SERVER_STAGES = ["sleep", "busy"]
SERVER_LISTEN = "srv"  # the server's listener: srv.sock (unix) or srv.port (tcp)
EVERY = {**MECHANISMS, **SERVERS}

# The slow stage: which languages can play it, and the root cause the truth expects.
STAGES = {
    "sleep": (CPY, "LongWait", "nanosleep"),
    "busy": (ALL, "LongRunning", None),
    "disk": (CPY, "LongWait", "fdatasync|fsync|write"),
    "lock": (CPY, "LongWait", "nanosleep"),
    "timer": (C, "LongWait", "pause"),
    "timerfd": (C, "LongWait", "read"),
}
SHAPES = ["chain", "fan-in", "fan-out-join", "tree"]
SUFFIX = {"c": "c", "py": "py", "sh": "sh"}


def build_shape(rng, shape, n):
    """Nodes 0..n-1, node n-1 the sink; edges (u, d) in an order where u's inputs come first."""
    sink = n - 1
    edges = []
    if shape == "chain":
        edges = [(k, k + 1) for k in range(n - 1)]
    elif shape == "fan-in":
        # Branches (chains) of the other nodes, each ending into the sink.
        others = list(range(n - 1))
        branches = rng.randint(2, min(3, len(others)))
        cuts = sorted(rng.sample(range(1, len(others)), branches - 1))
        parts = [others[a:b] for a, b in zip([0] + cuts, cuts + [len(others)])]
        for part in parts:
            edges += [(part[k], part[k + 1]) for k in range(len(part) - 1)]
            edges.append((part[-1], sink))
    elif shape == "fan-out-join":
        # An optional chain before the source, the source, 2+ middles, the join (the sink).
        middles = rng.randint(2, n - 2)
        before = n - 2 - middles
        src = before
        edges = [(k, k + 1) for k in range(before)]
        for m in range(src + 1, src + 1 + middles):
            edges += [(src, m), (m, sink)]
    elif shape == "tree":
        # An in-tree rooted at the sink: every other node has one out-edge to a node
        # nearer the sink.
        order = list(range(n - 1, -1, -1))  # sink first
        parent = {}
        for k in range(1, n):
            parent[order[k]] = order[rng.randrange(0, k)]
        edges = [(v, parent[v]) for v in sorted(parent)]
    return sink, topo_sorted(n, edges)


def topo_sorted(n, edges):
    """Edges ordered by their upstream node's topological position."""
    indeg = {v: 0 for v in range(n)}
    for _, d in edges:
        indeg[d] += 1
    ready = [v for v in range(n) if indeg[v] == 0]
    order = []
    while ready:
        v = ready.pop(0)
        order.append(v)
        for u, d in edges:
            if u == v:
                indeg[d] -= 1
                if indeg[d] == 0:
                    ready.append(d)
    pos = {v: k for k, v in enumerate(order)}
    return sorted(edges, key=lambda e: (pos[e[0]], pos[e[1]]))


def all_paths(edges, a, b):
    if a == b:
        return [[b]]
    out = []
    for u, d in edges:
        if u == a:
            out += [[a] + p for p in all_paths(edges, d, b)]
    return out


def generate(seed, index, only=None, load=False):
    rng = random.Random(f"{seed}:{index}")
    # make_server's own stream, so that a topology it leaves alone is the one generated
    # before servers existed; "server8" leaves every case of regressions.txt alone.
    srng = random.Random(f"{seed}:{index}:server8")
    for attempt in range(200):
        t = attempt_topology(rng, srng, seed, index, only, load)
        if t is not None:
            return t
    raise SystemExit(f"generate.py: no topology with mechanism {only} in 200 attempts "
                     f"(seed {seed} index {index})")


def candidates(u, d, ctx):
    """The mechanisms an edge u→d can be (languages, processes, forks, the lock stage)."""
    lang, group, outs, single = ctx["lang"], ctx["group"], ctx["outs"], ctx["single"]
    same = group[u] == group[d]
    cands = []
    for name, m in MECHANISMS.items():
        if lang[u] not in m["u"] or lang[d] not in m["d"]:
            continue
        if (m["same"] == "never" and same) or (m["same"] == "required" and not same):
            continue
        if m["u_single"] and not single(u):
            continue
        if m["wait"] and (len(outs[u]) != 1 or not single(d) and lang[d] != "c"):
            continue
        if ctx["stage"] == "lock" and u == ctx["slow"] and not m["lock"]:
            continue
        cands.append(name)
    return cands


def make_server(srng, t, only):
    """Turns the topology t (the fields of attempt_topology) into a server one, in place:
    the slow node S serves its requester R (an upstream whose only out-edge is R→S) and the
    queued clients Q (downstreams of S, at least one). Languages, the stage, processes and
    the other edges' mechanisms are changed where the server needs it. False when S has no
    such upstream or an edge can no longer be played."""
    slow, edges, outs, lang, group = t["slow"], t["edges"], t["outs"], t["lang"], t["group"]
    requesters = [u for u, d in edges if d == slow and len(outs[u]) == 1]
    if not requesters or not outs[slow]:
        return False
    r = srng.choice(requesters)
    answers = [e for e in outs[slow] if srng.random() < 0.6] or [srng.choice(outs[slow])]
    queued = [d for _, d in answers]
    for v in [r, slow] + queued:
        if lang[v] == "sh":
            lang[v] = srng.choice(["c", "py"])
    if t["stage"] not in SERVER_STAGES:
        t["stage"] = srng.choices(SERVER_STAGES, weights=[3, 2])[0]
    wait = only[len("server-"):] if only in SERVERS else srng.choice(["epoll", "poll", "select"])
    name = f"server-{wait}"
    for e in [(r, slow)] + answers:
        t["mech"][e] = name
    t["forked_by"].pop(r, None)
    t["forked_by"].pop(slow, None)
    members = lambda: {g: [v for v in range(t["n"]) if group[v] == g] for g in set(group.values())}
    single = lambda v: len(members()[group[v]]) == 1
    # R and the first queued client are sometimes two threads of one C process.
    q = queued[0]
    threads = False
    if (single(r) and single(q) and q not in t["forked_by"]
            and not any(EVERY[t["mech"][e]]["u_single"] for e in outs[q])
            and srng.random() < 0.35):
        lang[r] = lang[q] = "c"
        group[q] = group[r]
        threads = True
    # The other edges, checked again (a language or a process changed): those that cannot
    # be played any more take another mechanism.
    ctx = dict(lang=lang, group=group, outs=outs, single=single, stage=t["stage"], slow=slow)
    for e in edges:
        if t["mech"][e] in SERVERS:
            continue
        cands = candidates(e[0], e[1], ctx)
        if t["mech"][e] not in cands:
            if not cands:
                return False
            t["mech"][e] = srng.choice(cands)
        if MECHANISMS[t["mech"][e]]["wait"]:
            t["forked_by"][e[0]] = e[1]
        elif t["forked_by"].get(e[0]) == e[1]:
            del t["forked_by"][e[0]]
    t["server"] = dict(
        wait=wait, transport=srng.choice(["unix", "tcp"]),
        accept=srng.choice(["setup", "loop", "backlog"]), requester=r, queued=queued,
        threads=threads, delay={v: srng.randint(50, 100) for v in queued})
    return True


def attempt_topology(rng, srng, seed, index, only, load):
    server_only = only if only in SERVERS else None
    only = None if server_only else only
    shape = rng.choice(SHAPES)
    n = rng.randint(3 if shape in ("fan-in", "fan-out-join") else 2, 6)
    if shape == "fan-out-join" and n < 4:
        n = 4
    sink, edges = build_shape(rng, shape, n)
    slow = rng.choice([v for v in range(n) if v != sink])
    stage = rng.choices(list(STAGES), weights=[3, 2, 2, 2, 1, 1])[0]
    outs = {v: [e for e in edges if e[0] == v] for v in range(n)}

    # Languages: mostly C; the slow node's language must play its stage, and a held lock's
    # holders and waiters must have a lock mechanism in common.
    lang = {v: rng.choices(["c", "py", "sh"], weights=[55, 30, 15])[0] for v in range(n)}
    if only:
        m = MECHANISMS[only]
        for v in range(n):
            lang[v] = rng.choice(sorted(m["u"] & m["d"])) if m["u"] & m["d"] else "c"
    if lang[slow] not in STAGES[stage][0]:
        lang[slow] = "c"
    if stage == "lock":
        for _, d in outs[slow]:
            if lang[d] == "sh":
                lang[d] = rng.choice(["c", "py"])

    # Processes: sometimes two or three adjacent C nodes are threads of one process.
    group = {v: v for v in range(n)}
    if rng.random() < 0.35:
        cands = [(u, d) for u, d in edges if lang[u] == "c" and lang[d] == "c"]
        if cands:
            u, d = rng.choice(cands)
            group[d] = group[u]
            if rng.random() < 0.4:
                more = [v for (a, b) in edges for v in (a, b)
                        if (a in (u, d) or b in (u, d)) and lang[v] == "c" and group[v] == v
                        and v not in (u, d)]
                if more:
                    group[rng.choice(more)] = group[u]
    members = {}
    for v in range(n):
        members.setdefault(group[v], []).append(v)

    def single(v):
        return len(members[group[v]]) == 1

    mech = {}
    forked_by = {}
    ctx = dict(lang=lang, group=group, outs=outs, single=single, stage=stage, slow=slow)
    for u, d in edges:
        cands = candidates(u, d, ctx)
        if not cands:
            return None
        if only in cands and rng.random() < 0.8:
            mech[(u, d)] = only
        else:
            mech[(u, d)] = rng.choice(cands)
        if MECHANISMS[mech[(u, d)]]["wait"]:
            forked_by[u] = d

    t = dict(seed=seed, index=index, shape=shape, n=n, sink=sink, slow=slow, stage=stage,
             lang=lang, group=group, edges=edges, outs=outs, mech=mech, forked_by=forked_by,
             load=load, only=server_only or only, rng=rng, server=None)
    # A server topology: always with --only-mechanism server-*, else sometimes (never with
    # another --only-mechanism). make_server draws from srng alone.
    if server_only or (not only and srng.random() < SERVER_RATE):
        keep = copy.deepcopy({k: t[k] for k in ("lang", "group", "mech", "forked_by", "stage")})
        if not make_server(srng, t, server_only):
            if server_only:
                return None
            t.update(keep)  # left as it was
            lang, group, mech, forked_by = t["lang"], t["group"], t["mech"], t["forked_by"]
    members = {}
    for v in range(n):
        members.setdefault(group[v], []).append(v)

    # The truth path: the nodes on every path from the slow node to the sink; with a server,
    # its requester first (the request that started the slow work).
    paths = all_paths(edges, slow, sink)
    on_path = [v for v in paths[0] if all(v in p for p in paths)]
    path_edges = {(p[k], p[k + 1]) for p in paths for k in range(len(p) - 1)}
    if t["server"]:
        on_path = [t["server"]["requester"]] + on_path
        path_edges.add((t["server"]["requester"], slow))
    path_edges = sorted(path_edges, key=edges.index)
    path_mechs = sorted({mech[e] for e in path_edges})
    if t["only"] and t["only"] not in path_mechs:
        return None

    names = {v: f"t{index}n{v}{SUFFIX[lang[v]]}" for v in range(n)}
    t.update(members=members, names=names, on_path=on_path, path_edges=path_edges,
             path_mechs=path_mechs)
    return t


def noise_name(rng, taken):
    while True:
        name = rng.choice("abcdefghijklmopqrsuvwxyz") + "".join(
            rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(5, 9)))
        if name not in taken:
            taken.add(name)
            return name


def write_topology(t, out, node_bin, prefix=""):
    rng = t["rng"]
    names, lang, mech, edges = t["names"], t["lang"], t["mech"], t["edges"]
    folder_mechs = "+".join(t["path_mechs"])[:60]
    folder = os.path.join(out, f"{prefix}{t['index']:03d}-{t['shape']}-{folder_mechs}")
    if os.path.exists(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    chan = {e: f"e{k}" for k, e in enumerate(edges)}

    def link(name):
        os.symlink(node_bin, os.path.join(folder, name))

    def copy(src, name):
        dst = os.path.join(folder, name)
        shutil.copyfile(os.path.join(HERE, src), dst)
        os.chmod(dst, 0o755)

    srv = t["server"]

    def server_args(u, d):
        # A server edge: the listener, the transport, when S accepts, and the queued
        # client's delay (ms) between S's starting the work and its request.
        if mech[(u, d)] not in SERVERS:
            return ""
        delay = srv["delay"].get(d, 0) if u == t["slow"] else 0
        return f" {SERVER_LISTEN} {srv['transport']} {srv['accept']} {delay}"

    # One spec per process (a thread group's nodes in one file, its main thread first).
    for g, vs in sorted(t["members"].items()):
        lines = [f"total {t['n']}"]
        for u, d in edges:
            if mech[(u, d)] == "eventfd" and t["group"][u] == g:
                lines.append(f"eventfd {chan[(u, d)]}")
        for v in vs:
            lines += [f"node {names[v]}", f"stage {t['stage'] if v == t['slow'] else 'none'}"]
            # The server's loop is its last input (its other inputs come before it).
            ins = sorted([e for e in edges if e[1] == v], key=lambda e: mech[e] in SERVERS)
            for u, d in ins:
                extra = ""
                if EVERY[mech[(u, d)]]["wait"]:
                    extra = f" {folder}/{names[u]} {folder}/{names[u]}.spec"
                lines.append(f"in {mech[(u, d)]} {chan[(u, d)]}{extra}{server_args(u, d)}")
            for u, d in edges:
                if u == v:
                    lines.append(f"out {mech[(u, d)]} {chan[(u, d)]}{server_args(u, d)}")
        main = names[vs[0]]
        with open(os.path.join(folder, f"{main}.spec"), "w") as f:
            f.write("\n".join(lines) + "\n")
        if lang[vs[0]] == "c":
            link(main)
        elif lang[vs[0]] == "py":
            copy("node.py", main)
        else:
            copy("node.sh", main)

    taken = set(names.values())
    noise = [("spin", noise_name(rng, taken)), ("ping", noise_name(rng, taken)),
             ("pong", noise_name(rng, taken)), ("tick", noise_name(rng, taken))]
    if t["load"]:
        noise += [("hog", noise_name(rng, taken)), ("hog", noise_name(rng, taken)),
                  ("disk", noise_name(rng, taken))]
    watchdog = noise_name(rng, taken)
    for name in [nm for _, nm in noise] + [watchdog]:
        link(name)

    slow, sink = t["slow"], t["sink"]
    sh = [
        "#!/usr/bin/env bash",
        f"# Topology {t['seed']}:{t['index']} ({t['shape']}, {t['n']} nodes), written by",
        "# tests/topologies/generate.py (tests/topologies/README.md): do not edit.",
        "set -euo pipefail",
        'T=$(cd "$(dirname "$0")" && pwd)',
        "W=$(mktemp -d /var/tmp/cw-topo.XXXXXX)",
        "NOISE=()",
        "cleanup() {",
        "  local p f",
        "  exec 2>/dev/null  # not the shell's report of each noise process it kills",
        '  for p in "${NOISE[@]}"; do kill -KILL "$p" 2>/dev/null || true; done',
        '  for f in "$W"/pids/*; do [ -f "$f" ] && kill -KILL "$(<"$f")" 2>/dev/null || true; done',
        "  wait 2>/dev/null || true",
        '  rm -rf "$W"',
        "}",
        "trap cleanup EXIT",
        'die() { echo "driver run.sh: $*" >&2; exit 1; }',
        'cd "$W"',
        "mkdir ready pids times",
        "mkfifo noise.a noise.b",
    ]
    for e in edges:
        res = EVERY[mech[e]]["res"]
        c = chan[e]
        if res == "fifo":
            sh.append(f"mkfifo {c}")
        elif res == "lock":
            sh.append(f": >{c}.lock")
        elif res == "shm":
            sh.append(f"head -c 4096 /dev/zero >{c}.shm")
        elif res == "dir":
            sh.append(f"mkdir {c}.dir")
    for v in range(t["n"]):
        if lang[v] == "sh":
            sh.append(f"mkfifo idle.{names[v]}")
    sh.append("# Noise: never on the truth path.")
    for kind, name in noise:
        sh.append(f'"$T/{name}" --noise {kind} & NOISE+=($!)')
    sh.append("# The nodes run.sh starts (a forked node's parent node starts it).")
    started = [vs[0] for g, vs in sorted(t["members"].items()) if vs[0] not in t["forked_by"]]
    sh.append("NODES=() NAMES=()")
    for v in started:
        nm = names[v]
        sh.append(f'"$T/{nm}" "$T/{nm}.spec" 2>"$W/{nm}.err" & NODES+=($!) NAMES+=({nm})')
    sh += [
        "# At most 6 s for the whole topology (cw-topo-node --noise watchdog).",
        f'"$T/{watchdog}" --noise watchdog & NOISE+=($!)',
        "failed=",
        'for k in "${!NODES[@]}"; do',
        '  if ! wait "${NODES[$k]}" 2>/dev/null; then  # (not the shell\'s "Killed" line)',
        '    failed+=" ${NAMES[$k]} ($(tail -1 "$W/${NAMES[$k]}.err" 2>/dev/null))"',
        "  fi",
        "done",
        'if [ -e "$W/TIMEOUT" ]; then',
        '  late=',
        f'  for n in {" ".join(names[v] for v in range(t["n"]))}; do [ -s "times/$n" ] || late+=" $n"; done',
        '  die "the topology took longer than 6 s; not done:${late}"',
        'fi',
        '[ -z "$failed" ] || die "nodes failed:$failed"',
        "# Every node went through; the sink waited for the slow stage, which lasted.",
    ]
    for v in range(t["n"]):
        sh.append(f'[ -s times/{names[v]} ] || die "{names[v]} wrote no times"')
    sh += [
        f"read -r b i s <times/{names[sink]}",
        f'[ $((i - b)) -ge 1000000000 ] || die "the sink {names[sink]} waited only $(((i - b) / 1000000)) ms"',
        f"read -r b i s <times/{names[slow]}",
        f'[ $((s - i)) -ge 1100000000 ] || die "the slow stage of {names[slow]} lasted only $(((s - i) / 1000000)) ms"',
        "",
    ]
    run_sh = os.path.join(folder, "run.sh")
    with open(run_sh, "w") as f:
        f.write("\n".join(sh))
    os.chmod(run_sh, 0o755)

    kind, what = STAGES[t["stage"]][1], STAGES[t["stage"]][2]
    root = {"comm": names[slow], "kind": kind}
    if what:
        root["what"] = what
    path = [names[v] for v in t["on_path"]]
    replay = (f"tests/topologies/generate.py --seed {t['seed']} --index {t['index']}"
              + (" --load" if t["load"] else "")
              + (f" --only-mechanism {t['only']}" if t["only"] else "") + " --out DIR")
    desc_edges = ", ".join(f"{names[u]}→{names[d]} {mech[(u, d)]}" for u, d in edges)
    desc_server = ""
    if srv:
        qs = ", ".join(names[q] for q in srv["queued"])
        accept = {"setup": "it accepted every client before the barrier",
                  "loop": "its loop accepts every client before the work",
                  "backlog": "the queued clients connect while it works (the connection waits "
                             "in the listen backlog) and its loop accepts them after"}
        desc_server = (
            f" {names[slow]} is a single-threaded server: its loop waits in {srv['wait']} for "
            f"its clients on {srv['transport']} sockets; {accept[srv['accept']]}. "
            f"{names[srv['requester']]} requests the work (the slow stage); {qs} "
            f"{'sends its' if len(srv['queued']) == 1 else 'send their'} own request "
            f"50-100 ms after it began and wait{'s' if len(srv['queued']) == 1 else ''} in recv "
            f"for the answer, given after that work"
            + (f" ({names[srv['requester']]} and {names[srv['queued'][0]]} are threads of one "
               f"process)" if srv["threads"] else "") + ".")
    scenario = {
        "title": f"Generated topology {t['seed']}:{t['index']}: {t['shape']} of {t['n']} nodes, "
                 f"{t['stage']} stage on {names[slow]}",
        "case": "tests/topologies: a generated topology",
        "story": f"Edges (the downstream's wait is ended by the upstream): {desc_edges}. "
                 f"{names[slow]} has the slow stage ({t['stage']}, 1.2 s); the others are "
                 f"instant.{desc_server} {names[sink]} is the node the user sees hang.",
        "command": [run_sh],
        "hang": names[sink],
        "truth": {
            "hang": {"comm": names[sink], "kind": "LongWait"},
            "root_cause": root,
            "path": path,
        },
    }
    with open(os.path.join(folder, "scenario.json"), "w") as f:
        json.dump(scenario, f, indent=2)
        f.write("\n")
    topo = {
        "seed": t["seed"], "index": t["index"], "replay": replay, "shape": t["shape"],
        "stage": t["stage"], "load": t["load"], "only_mechanism": t["only"],
        "path_mechanisms": t["path_mechs"],
        "nodes": [{"name": names[v], "lang": lang[v], "process": names[t["members"][t["group"][v]][0]],
                   "thread": len(t["members"][t["group"][v]]) > 1,
                   "forked_by": names[t["forked_by"][v]] if v in t["forked_by"] else None,
                   "stage": t["stage"] if v == slow else "none"} for v in range(t["n"])],
        "edges": [{"from": names[u], "to": names[d], "mechanism": mech[(u, d)],
                   "on_path": (u, d) in t["path_edges"]} for u, d in edges],
        "sink": names[sink], "slow": names[slow], "path": path,
        "noise": [{"kind": k, "comm": nm} for k, nm in noise],
        "server": None if not srv else {
            "server": names[slow], "wait": srv["wait"], "transport": srv["transport"],
            "accept": srv["accept"], "requester": names[srv["requester"]],
            "queued": [names[q] for q in srv["queued"]],
            "clients": "threads" if srv["threads"] else "processes", "lang": lang[slow],
            "delay_ms": {names[q]: ms for q, ms in srv["delay"].items()}},
    }
    with open(os.path.join(folder, "topology.json"), "w") as f:
        json.dump(topo, f, indent=2)
        f.write("\n")
    return folder


def default_node_bin():
    for d in (os.environ.get("CW_TOPO_NODE", ""),
              os.path.join(HERE, "../../build/tests/topologies/cw-topo-node")):
        if d and os.access(d, os.X_OK):
            return os.path.abspath(d)
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--count", type=int)
    p.add_argument("--index", type=int, help="generate this one topology only (a replay)")
    p.add_argument("--out", required=True)
    p.add_argument("--load", action="store_true",
                   help="two CPU hogs and a disk writer beside each topology")
    p.add_argument("--only-mechanism", choices=sorted(EVERY))
    p.add_argument("--prefix", default="", help="put before each folder's name")
    p.add_argument("--node", help="cw-topo-node (default: $CW_TOPO_NODE, else "
                   "build/tests/topologies/cw-topo-node of this checkout)")
    a = p.parse_args()
    if (a.count is None) == (a.index is None):
        p.error("give --count N or --index I")
    node_bin = os.path.abspath(a.node) if a.node else default_node_bin()
    if not node_bin or not os.access(node_bin, os.X_OK):
        print("generate.py: no cw-topo-node: build it (ninja -C build cw-topo-node) or give "
              "--node", file=sys.stderr)
        return 2
    print(f"seed {a.seed}")
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    indices = [a.index] if a.index is not None else range(a.count)
    for i in indices:
        t = generate(a.seed, i, a.only_mechanism, a.load)
        folder = write_topology(t, out, node_bin, a.prefix)
        print(os.path.basename(folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
