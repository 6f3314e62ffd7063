`causeway eval` runs the scenario suite (docs/scenarios.md). Recording needs root, so
these checks use `--from`: the diagnosis of recordings already made, here the bundled
examples/slow-server.trace as the one scenario of a small suite.

  $ mkdir -p $TMP_DIR/suite/01-slow $TMP_DIR/traces
  $ causeway convert examples/slow-server.trace -o $TMP_DIR/traces/01-slow.cwt >/dev/null 2>&1
  $ cat > $TMP_DIR/suite/01-slow/scenario.json <<'JSON'
  > {
  >   "title": "A client waits for a computing server",
  >   "command": ["true"],
  >   "truth": {
  >     "hang": {"comm": "cw-client", "kind": "LongWait"},
  >     "root_cause": {"comm": "cw-srv-worker", "kind": "LongRunning", "what": "^ran 799"},
  >     "path": ["cw-srv-worker", "cw-client"],
  >     "edges": [{"from": "cw-srv-worker", "to": "cw-client", "kind": "message"}]
  >   }
  > }
  > JSON

The table has the Argus paper's Table 2 columns and whether the root cause matches the truth.

  $ causeway eval --suite $TMP_DIR/suite --from $TMP_DIR/traces 2>/dev/null
  | scenario | connections filtered out by splitting | connections added by rules | data flags | questions | baseline | interactive slice | automatic slice | interactive / automatic | root cause | without its rule |
  | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |
  | 01-slow | 0.250 (4/16) | 0.000 (0/8) | 0 | 1 | 0 | 2 | 5 | 0.40 | **match**: cw-srv-worker LongRunning | — |
  
  1 of 1 scenarios match their ground truth; median questions 1 (target ≤ 3); 0 of 0 pack-dependent scenarios do worse without their pack.

  $ causeway eval --suite $TMP_DIR/suite --from $TMP_DIR/traces --json 2>/dev/null | jq -c '[.summary, .scenarios[0].with_rules.path, .scenarios[0].with_rules.queries[0].kind]'
  [{"failing_without_rule":0,"median_questions":1,"passed":1,"rule_dependent":0,"scenarios":1},["cw-srv-worker","cw-client"],"recurse"]

A scenario with `uses_pack` proves a pack found on the search path: the pack must apply to
the recording by itself (its `applies` conditions), and the diagnosis without it must miss
the truth or ask more. Here a pack for cw-server programs answers the one question.

  $ mkdir -p $TMP_DIR/packs/answers
  $ cat > $TMP_DIR/packs/answers/pack.cw <<'CW'
  > pack answers.server {
  >   version "1.0.0"
  >   requires linux.kernel
  >   applies program("cw-server")
  > }
  > answer q1 {
  >   question recurse
  >   subject process.comm == "cw-server" and thread.comm == "cw-srv-worker"
  >   choose recurse
  > }
  > CW
  $ sed -i 's/"command": \["true"\],/"command": ["true"], "uses_pack": "answers.server",/' $TMP_DIR/suite/01-slow/scenario.json
  $ CAUSEWAY_RULES_PATH=$TMP_DIR/packs causeway eval --suite $TMP_DIR/suite --from $TMP_DIR/traces 2>&1 | grep -v '^|'
  eval [1/1] 01-slow: match (0 questions; without its pack: matches after 1 question (0 with it))
  
  1 of 1 scenarios match their ground truth; median questions 0 (target ≤ 3); 1 of 1 pack-dependent scenarios do worse without their pack.

A pack that does not apply to the recording, or that is as good left out, fails the scenario.

  $ sed -i 's/program("cw-server")/program("cw-nosuch")/' $TMP_DIR/packs/answers/pack.cw
  $ CAUSEWAY_RULES_PATH=$TMP_DIR/packs causeway eval --suite $TMP_DIR/suite --from $TMP_DIR/traces 2>&1 | grep '^eval' | sed "s|$TMP_DIR/||"
  eval [1/1] 01-slow: error: pack answers.server does not apply to this recording (`causeway rules list traces/01-slow.cwt` says why)
  $ sed -i -e 's/program("cw-nosuch")/program("cw-server")/' -e 's/"cw-srv-worker"/"cw-nobody"/' $TMP_DIR/packs/answers/pack.cw
  $ CAUSEWAY_RULES_PATH=$TMP_DIR/packs causeway eval --suite $TMP_DIR/suite --from $TMP_DIR/traces 2>&1 | grep -A2 '^01-slow'
  01-slow: 
    - without answers.server the diagnosis is as good (it matches too, after 1 question): the pack is not shown to help
  $ CAUSEWAY_RULES_PATH=$TMP_DIR/packs causeway eval --suite $TMP_DIR/suite --from $TMP_DIR/traces >/dev/null 2>&1
  [3]
  $ sed -i 's/"uses_pack": "answers.server",//' $TMP_DIR/suite/01-slow/scenario.json

A truth the diagnosis disagrees with is a mismatch (exit 3), and each differing item is
listed under the table.

  $ sed -i 's/"kind": "LongRunning"/"kind": "LongWait"/' $TMP_DIR/suite/01-slow/scenario.json
  $ causeway eval --suite $TMP_DIR/suite --from $TMP_DIR/traces 2>/dev/null | tail -3
  
  01-slow: 
    - root cause: cw-srv-worker LongRunning, expected cw-srv-worker LongWait
  $ causeway eval --suite $TMP_DIR/suite --from $TMP_DIR/traces >/dev/null 2>&1
  [3]

Unknown scenarios and broken scenario files are bad input (exit 1), said with where.

  $ causeway eval --suite $TMP_DIR/suite nosuch
  causeway: eval: no scenario 'nosuch' (there are: 01-slow)
  [1]
  $ printf '{"title": "t",\n "comand": ["x"]}' > $TMP_DIR/suite/01-slow/scenario.json
  $ causeway eval --suite $TMP_DIR/suite --from $TMP_DIR/traces 2>&1 | sed "s|$TMP_DIR/||"
  causeway: suite/01-slow/scenario.json: comand: unknown key (expected one of: title, case, story, command, record, pack, needs_pack, uses_pack, hang, answers, truth)
  $ printf '{"title": "t"\n "command": ["x"]}' > $TMP_DIR/suite/01-slow/scenario.json
  $ causeway eval --suite $TMP_DIR/suite --from $TMP_DIR/traces 2>&1 | sed "s|$TMP_DIR/||"
  causeway: suite/01-slow/scenario.json:2:10: not valid JSON: syntax error while parsing object - unexpected string literal; expected '}'
