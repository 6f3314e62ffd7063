Where packs are found, and packs that apply themselves (docs/rules.md "Where packs are
found"). A pack in the user's folder says it is for a program named `server`: it is
loaded for examples/server-loop.trace, whose server process has that name, and not for a
trace without it.

  $ mkdir -p -m 755 $TMP_DIR/home/.local/share/causeway/rules && chmod 755 $TMP_DIR/home $TMP_DIR/home/.local $TMP_DIR/home/.local/share $TMP_DIR/home/.local/share/causeway
  $ printf 'pack demo.loop {\n  version "0.2.0"\n  requires linux.kernel\n  applies program("server"), library("libuv.so*")\n}\n\nsplit answer.sent {\n  at send\n  where fd == 5\n}\n' > $TMP_DIR/home/.local/share/causeway/rules/demo.cw
  $ HOME=$TMP_DIR/home causeway rules list examples/server-loop.trace | sed "s|$TMP_DIR/||; s|$PWD/||" | grep -A2 -E "^(linux.kernel|node.libuv|demo.loop) "
  linux.kernel 0.1.0  stdlib-rules/linux-kernel/pack.cw
    conditions: -
    applies: always (no conditions)
  --
  node.libuv 0.1.0  stdlib-rules/node-libuv/pack.cw
    conditions: library("libuv.so*"), program("node*"), symbol("uv_run")
    applies: no: none of its conditions holds
  --
  demo.loop 0.2.0  home/.local/share/causeway/rules/demo.cw
    conditions: program("server"), library("libuv.so*")
    applies: program server (pid 10)

Commands load it for that trace, and say why.

  $ HOME=$TMP_DIR/home causeway graph examples/server-loop.trace --json 2>&1 | grep -E "applies|demo.loop/answer.sent"
  causeway: pack demo.loop applies to this trace: program server (pid 10)
        "demo.loop/answer.sent": 1,

A trace with no such program does not load it.

  $ sed 's/comm=server/comm=daemon/; s|exe=/usr/bin/server|exe=/usr/bin/daemon|' examples/server-loop.trace > $TMP_DIR/other.trace
  $ HOME=$TMP_DIR/home causeway rules list $TMP_DIR/other.trace | grep -A2 demo.loop | tail -1
    applies: no: none of its conditions holds
  $ HOME=$TMP_DIR/home causeway graph $TMP_DIR/other.trace --json 2>&1 | grep -c "demo.loop"
  0
  [1]

`rules which` says where a rule or a pack is written.

  $ HOME=$TMP_DIR/home causeway rules which answer.sent | sed "s|$TMP_DIR/||"
  home/.local/share/causeway/rules/demo.cw:7: split demo.loop/answer.sent (demo.loop 0.2.0)
  $ causeway rules which linux.kernel/loop.request | sed "s|$PWD/||; s|:[0-9]*:|:LINE:|"
  stdlib-rules/linux-kernel/pack.cw:LINE: batch linux.kernel/loop.request (linux.kernel 0.1.0)
  $ causeway rules which no.such.rule
  causeway: no rule or pack has the id 'no.such.rule'
  [1]

A folder others can write, or a link, is not searched: causeway often runs as root, and a
pack changes what it reports.

  $ chmod 777 $TMP_DIR/home/.local/share/causeway/rules && HOME=$TMP_DIR/home causeway rules list 2>&1 | sed "s|$TMP_DIR/||" | head -2
  home/.local/share/causeway/rules: warning: the packs of this folder are not loaded: others can write it
  hint: only folders that are no links, owned by this user or root and writable by nobody else are searched (docs/rules.md "Where packs are found")
  $ chmod 755 $TMP_DIR/home/.local/share/causeway/rules && mv $TMP_DIR/home/.local/share/causeway/rules $TMP_DIR/elsewhere && ln -s $TMP_DIR/elsewhere $TMP_DIR/home/.local/share/causeway/rules && HOME=$TMP_DIR/home causeway rules list 2>&1 | sed "s|$TMP_DIR/||" | head -1
  home/.local/share/causeway/rules: warning: the packs of this folder are not loaded: a link or not a folder

A project's .causeway/rules (in the current folder) is searched as well.

  $ mkdir -p -m 755 $TMP_DIR/project/.causeway/rules && cp $TMP_DIR/elsewhere/demo.cw $TMP_DIR/project/.causeway/rules/ && chmod 755 $TMP_DIR/project $TMP_DIR/project/.causeway && cd $TMP_DIR/project && causeway rules list | grep -A1 demo.loop | sed "s|$TMP_DIR/||"
  demo.loop 0.2.0  project/.causeway/rules/demo.cw
    conditions: program("server"), library("libuv.so*")
