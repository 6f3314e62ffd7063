Hostile rule packs: each file under packs/ is one thing a shared pack could do to the
machine or the terminal. Each case says what causeway answers and is bounded in time by
`timeout` (exit 124 would fail the case). The inputs are described in packs/README.md.

Random bytes after a header: an error at the first one, shown escaped.

  $ timeout 20 causeway rules check tests/hostile/packs/binary-junk.cw
  tests/hostile/packs/binary-junk.cw:5:1: error: expected an item (pack, list, lua, split, batch, link, edge, flag, holder, answer, test or disable), found '\xa5'
    \xa5M\xca\x18%0\xbb\x1dm\x13,\xde\xd6#{.\xd9\x1e?r\x1f\xcb\x19q\x17D\x94\xd6I<\x9d\4`\xbe1 \x1ei\xfeڠ\xee蹙\x7f\|)\x99\xfd\xaf\xe5\x93%<\xd6T\xafM\xfa\xd7\x14'\xa0\xae\xb3\xfe\xe9#/\x8a\xf2!\x1f\x9e\xe4\x91ű\x0b\xec\xb5V;\xfc\x1eo\x93B~\xcb\xc8\xfe)U\xe5͎F܎Է\xc2vM*ZMvw\x06\xf8]\x86\x90\x02J...
    ^
  [1]

A byte order mark from an editor opens the file like whitespace.

  $ timeout 20 causeway rules check tests/hostile/packs/bom.cw
  1 pack checked (hostile.bom), 0 warnings

Windows line endings are accepted.

  $ timeout 20 causeway rules check tests/hostile/packs/crlf.cw
  1 pack checked (hostile.crlf), 0 warnings

A '-' in a pack id is named as such.

  $ timeout 20 causeway rules check tests/hostile/packs/dash-in-id.cw
  tests/hostile/packs/dash-in-id.cw: error: file is not part of a pack
  hint: start it with `pack ID { ... }` or put a pack.cw beside it
  tests/hostile/packs/dash-in-id.cw:1:18: error: a pack id cannot hold '-'
    pack hostile.dash-id {
                     ^
  hint: a pack id is names of letters, digits and '_' joined by '.', e.g. my_team.server
  [1]

100,000 nested parentheses in an expression stop at the nesting limit.

  $ timeout 20 causeway rules check tests/hostile/packs/deep-parens.cw
  tests/hostile/packs/deep-parens.cw:8:74: error: expression nested too deeply (limit 64)
    ...((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((...
                                               ^
  [1]

100,000 nested parentheses in a Lua block: Lua's own limit, with its reason.

  $ timeout 20 causeway rules check tests/hostile/packs/deep-lua.cw
  tests/hostile/packs/deep-lua.cw:6:1: error: lua block (pack hostile.deep_lua) does not compile: C stack overflow
    x = ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((...
    ^
  [1]

A number past 64 bits is an error where it is written.

  $ timeout 20 causeway rules check tests/hostile/packs/huge-literal.cw
  tests/hostile/packs/huge-literal.cw:8:17: error: number out of range (the largest is 9223372036854775807)
      where to.ts > 99999999999999999999999
                    ^~~~~~~~~~~~~~~~~~~~~~~
  [1]

Bytes that are not UTF-8 in a string: the pack still checks.

  $ timeout 20 causeway rules check tests/hostile/packs/invalid-utf8.cw
  1 pack checked (hostile.bad_utf8), 0 warnings

A line of a megabyte: the error shows a window of it.

  $ timeout 20 causeway rules check tests/hostile/packs/long-line.cw
  tests/hostile/packs/long-line.cw:8:1000037: error: unknown field 'from.nosuch'
    ...xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" and from.nosuch == 1
                                               ^~~~~~~~~~~
  [1]

20,000 rules load in bounded time.

  $ timeout 20 causeway rules check tests/hostile/packs/many-rules.cw
  1 pack checked (hostile.many_rules), 0 warnings

A `requires` list of 50,000 packs that do not exist: linear, and the first 100 errors are
shown with a count of the rest.

  $ { printf 'pack hostile.many_requires {\n  version "0.1.0"\n  requires '; seq -f 'p%g' 50000 | paste -sd, | sed 's/,/, /g'; printf '}\n'; } > $TMP_DIR/requires.cw
  $ timeout 20 causeway rules check $TMP_DIR/requires.cw >$TMP_DIR/requires.out 2>&1; echo "exit $?"; wc -l <$TMP_DIR/requires.out; tail -n 5 $TMP_DIR/requires.out
  exit 1
  401
  .*/requires.cw:3:498: error: pack 'hostile.many_requires' requires 'p100', which is not loaded (re)
    ...p92, p93, p94, p95, p96, p97, p98, p99, p100, p101, p102, p103, p104, p105, p106, p107, p108, p109, p110, p111, p112, p1...
                                               ^~~~
  hint: add it with --rules, or put it on CAUSEWAY_RULES_PATH
  49900 more errors not shown (the first 100 are above)

A NUL inside a string literal is refused, not dropped.

  $ timeout 20 causeway rules check tests/hostile/packs/nul-in-string.cw
  tests/hostile/packs/nul-in-string.cw:8:32: error: a NUL byte (byte 125) in a string
      where from.syscall.name == "a\x00b"
                                   ^~~~
  hint: a string cannot hold a NUL; write the text without it
  [1]

A pack that requires itself, and two that require each other.

  $ timeout 20 causeway rules check tests/hostile/packs/requires-self.cw
  tests/hostile/packs/requires-self.cw:1:1: error: packs require each other in a cycle: hostile.self_require -> hostile.self_require
    pack hostile.self_require {
    ^~~~
  [1]

  $ timeout 20 causeway rules check tests/hostile/packs/requires-cycle
  tests/hostile/packs/requires-cycle/a.cw:1:1: error: packs require each other in a cycle: hostile.a -> hostile.b -> hostile.a
    pack hostile.a {
    ^~~~
  [1]

Escape sequences in a pack reach the terminal as text.

  $ timeout 20 causeway rules check tests/hostile/packs/terminal-escape.cw
  tests/hostile/packs/terminal-escape.cw:9:34: error: expected '}' to close rule 'e'
      where from.syscall.name == "x" \x1b[2J and bogus\x1b[31m
                                     ^
  [1]

Unterminated strings say where they began.

  $ timeout 20 causeway rules check tests/hostile/packs/unterminated-lua.cw
  tests/hostile/packs/unterminated-lua.cw:5:5: error: unterminated long string (expected ']]')
    lua [[
        ^~
  [1]

  $ timeout 20 causeway rules check tests/hostile/packs/unterminated-string.cw
  tests/hostile/packs/unterminated-string.cw:8:9: error: unterminated string
      where "abc == 1
            ^
  hint: a string ends on its line; use [[ ... ]] for text over several lines
  [1]

A literal zero divisor fails the check, not the graph.

  $ timeout 20 causeway rules check tests/hostile/packs/zero-divisor.cw
  tests/hostile/packs/zero-divisor.cw:8:17: error: modulo by zero
      where to.ts % 0 == 1
                    ^
  [1]

A divisor that is zero only at run time fails the rule's test with its place.

  $ timeout 20 causeway rules test tests/hostile/packs/runtime-zero-divisor.cw
  FAIL hostile.runtime_zero "the rule runs"
  tests/hostile/packs/runtime-zero-divisor.cw:8:9: error: modulo by zero (rule hostile.runtime_zero/e)
      where to.ts % (from.ts - from.ts) == 1
            ^
  0 passed, 1 failed
  [1]

INT64_MIN / -1 wraps instead of trapping.

  $ timeout 20 causeway rules test tests/hostile/packs/int-min-div.cw
  PASS hostile.min_div "the rule runs"
  1 passed, 0 failed

Lua hooks are sandboxed: no io, os, load, require, debug, string.dump; each call has an
instruction budget and a memory cap. Each hook below breaks one of these and fails its
pack's test with a message naming the pack, the rule and the line; nothing escapes.

  $ timeout 20 causeway rules test tests/hostile/packs/lua-endless-loop.cw
  FAIL hostile.endless_loop "the hook runs"
  tests/hostile/packs/lua-endless-loop.cw:17:1: error: tests/hostile/packs/lua-endless-loop.cw:7: error: lua hook 'f' (pack hostile.endless_loop, rule hostile.endless_loop/hook.endless_loop) exceeded its instruction budget of 1000000 instructions
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-endless-recursion.cw
  FAIL hostile.endless_recursion "the hook runs"
  tests/hostile/packs/lua-endless-recursion.cw:17:1: error: tests/hostile/packs/lua-endless-recursion.cw:7: error: lua hook 'f' (pack hostile.endless_recursion, rule hostile.endless_recursion/hook.endless_recursion) exceeded its instruction budget of 1000000 instructions
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-memory-bomb.cw
  FAIL hostile.memory_bomb "the hook runs"
  tests/hostile/packs/lua-memory-bomb.cw:17:1: error: tests/hostile/packs/lua-memory-bomb.cw:7: error: lua hook 'f' (pack hostile.memory_bomb, rule hostile.memory_bomb/hook.memory_bomb) ran out of memory (limit 33554432 bytes)
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-huge-string.cw
  FAIL hostile.huge_string "the hook runs"
  tests/hostile/packs/lua-huge-string.cw:17:1: error: tests/hostile/packs/lua-huge-string.cw:7: error: lua hook 'f' (pack hostile.huge_string, rule hostile.huge_string/hook.huge_string) failed: resulting string too large
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-pattern-backtrack.cw
  FAIL hostile.pattern_backtrack "the hook runs"
  tests/hostile/packs/lua-pattern-backtrack.cw:17:1: error: tests/hostile/packs/lua-pattern-backtrack.cw:7: error: lua hook 'f' (pack hostile.pattern_backtrack, rule hostile.pattern_backtrack/hook.pattern_backtrack) exceeded its instruction budget of 1000000 instructions
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-os-execute.cw
  FAIL hostile.os_execute "the hook runs"
  tests/hostile/packs/lua-os-execute.cw:17:1: error: tests/hostile/packs/lua-os-execute.cw:7: error: lua hook 'f' (pack hostile.os_execute, rule hostile.os_execute/hook.os_execute) failed: attempt to index a nil value (global 'os')
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-io-open.cw
  FAIL hostile.io_open "the hook runs"
  tests/hostile/packs/lua-io-open.cw:17:1: error: tests/hostile/packs/lua-io-open.cw:7: error: lua hook 'f' (pack hostile.io_open, rule hostile.io_open/hook.io_open) failed: attempt to index a nil value (global 'io')
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-load-bytecode.cw
  FAIL hostile.load_bytecode "the hook runs"
  tests/hostile/packs/lua-load-bytecode.cw:17:1: error: tests/hostile/packs/lua-load-bytecode.cw:7: error: lua hook 'f' (pack hostile.load_bytecode, rule hostile.load_bytecode/hook.load_bytecode) failed: attempt to call a nil value (global 'load')
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-require-module.cw
  FAIL hostile.require_module "the hook runs"
  tests/hostile/packs/lua-require-module.cw:17:1: error: tests/hostile/packs/lua-require-module.cw:7: error: lua hook 'f' (pack hostile.require_module, rule hostile.require_module/hook.require_module) failed: attempt to call a nil value (global 'require')
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-string-dump.cw
  FAIL hostile.string_dump "the hook runs"
  tests/hostile/packs/lua-string-dump.cw:17:1: error: tests/hostile/packs/lua-string-dump.cw:7: error: lua hook 'f' (pack hostile.string_dump, rule hostile.string_dump/hook.string_dump) failed: attempt to call a nil value (field 'dump')
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-getmetatable-string.cw
  FAIL hostile.getmetatable_string "the hook runs"
  tests/hostile/packs/lua-getmetatable-string.cw:17:1: error: tests/hostile/packs/lua-getmetatable-string.cw:7: error: lua hook 'f' (pack hostile.getmetatable_string, rule hostile.getmetatable_string/hook.getmetatable_string) failed: attempt to index a boolean value
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-collectgarbage.cw
  FAIL hostile.collectgarbage "the hook runs"
  tests/hostile/packs/lua-collectgarbage.cw:17:1: error: tests/hostile/packs/lua-collectgarbage.cw:7: error: lua hook 'f' (pack hostile.collectgarbage, rule hostile.collectgarbage/hook.collectgarbage) failed: attempt to call a nil value (global 'collectgarbage')
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-error-table.cw
  FAIL hostile.error_table "the hook runs"
  tests/hostile/packs/lua-error-table.cw:17:1: error: tests/hostile/packs/lua-error-table.cw:7: error: lua hook 'f' (pack hostile.error_table, rule hostile.error_table/hook.error_table) failed: (error object is a table value)
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-error-nil.cw
  FAIL hostile.error_nil "the hook runs"
  tests/hostile/packs/lua-error-nil.cw:17:1: error: tests/hostile/packs/lua-error-nil.cw:7: error: lua hook 'f' (pack hostile.error_nil, rule hostile.error_nil/hook.error_nil) failed: (error object is a nil value)
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-wrong-type.cw
  PASS hostile.wrong_type "the hook runs"
  1 passed, 0 failed

  $ timeout 20 causeway rules test tests/hostile/packs/lua-coroutine-yield.cw
  FAIL hostile.coroutine_yield "the hook runs"
  tests/hostile/packs/lua-coroutine-yield.cw:17:1: error: tests/hostile/packs/lua-coroutine-yield.cw:7: error: lua hook 'f' (pack hostile.coroutine_yield, rule hostile.coroutine_yield/hook.coroutine_yield) failed: attempt to index a nil value (global 'coroutine')
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-rawset-global.cw
  FAIL hostile.rawset_global "the hook runs"
  tests/hostile/packs/lua-rawset-global.cw:17:1: error: tests/hostile/packs/lua-rawset-global.cw:7: error: lua hook 'f' (pack hostile.rawset_global, rule hostile.rawset_global/hook.rawset_global) failed: bad argument #1 to 'rawset' (table expected, got nil)
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-deep-pcall.cw
  PASS hostile.deep_pcall "the hook runs"
  1 passed, 0 failed

  $ timeout 20 causeway rules test tests/hostile/packs/lua-top-level-loop.cw
  tests/hostile/packs/lua-top-level-loop.cw:7:1: error: lua block (pack hostile.top_level_loop) exceeded its instruction budget of 1000000 instructions
    while true do end function f(a, b) return true end
    ^
  tests/hostile/packs/lua-top-level-loop.cw:12:9: error: unknown Lua function 'f'
      where lua.f(from.ts, to.ts)
            ^~~~~~~~~~~~~~~~~~~~~
  hint: define it in a `lua [[ ... ]]` block of pack 'hostile.top_level_loop' or of a pack it requires
  [1]

Library functions loop in C, where the instruction hook never fires: each is charged for
the elements it moves or visits. table.move over 2^63 elements, and 100,000
table.insert(t, 1, i), each shifting the whole table, stop at the budget, in a hook and at
a block's top level (which `rules check` runs).

  $ timeout 20 causeway rules test tests/hostile/packs/lua-table-move.cw
  FAIL hostile.table_move "the hook runs"
  tests/hostile/packs/lua-table-move.cw:17:1: error: tests/hostile/packs/lua-table-move.cw:7: error: lua hook 'f' (pack hostile.table_move, rule hostile.table_move/hook.table_move) exceeded its instruction budget of 1000000 instructions
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules check tests/hostile/packs/lua-table-move-top.cw
  tests/hostile/packs/lua-table-move-top.cw:7:1: error: lua block (pack hostile.table_move_top) exceeded its instruction budget of 1000000 instructions
    table.move({}, 1, math.maxinteger - 2, 2) function f(a, b) return true end
    ^
  tests/hostile/packs/lua-table-move-top.cw:12:9: error: unknown Lua function 'f'
      where lua.f(from.ts, to.ts)
            ^~~~~~~~~~~~~~~~~~~~~
  hint: define it in a `lua [[ ... ]]` block of pack 'hostile.table_move_top' or of a pack it requires
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-table-insert.cw
  FAIL hostile.table_insert "the hook runs"
  tests/hostile/packs/lua-table-insert.cw:17:1: error: tests/hostile/packs/lua-table-insert.cw:7: error: lua hook 'f' (pack hostile.table_insert, rule hostile.table_insert/hook.table_insert) exceeded its instruction budget of 1000000 instructions
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules check tests/hostile/packs/lua-table-insert-top.cw
  tests/hostile/packs/lua-table-insert-top.cw:7:1: error: lua block (pack hostile.table_insert_top) exceeded its instruction budget of 1000000 instructions
    local t = {} for i = 1, 100000 do table.insert(t, 1, i) end function f(a, b) return true end
    ^
  tests/hostile/packs/lua-table-insert-top.cw:12:9: error: unknown Lua function 'f'
      where lua.f(from.ts, to.ts)
            ^~~~~~~~~~~~~~~~~~~~~
  hint: define it in a `lua [[ ... ]]` block of pack 'hostile.table_insert_top' or of a pack it requires
  [1]

Lua runs a message handler called from a hook with hooks off: xpcall's handler runs only
for the pack's own errors, under the budget, never for a broken budget.

  $ timeout 20 causeway rules test tests/hostile/packs/lua-xpcall-handler.cw
  FAIL hostile.xpcall_handler "the hook runs"
  tests/hostile/packs/lua-xpcall-handler.cw:17:1: error: tests/hostile/packs/lua-xpcall-handler.cw:7: error: lua hook 'f' (pack hostile.xpcall_handler, rule hostile.xpcall_handler/hook.xpcall_handler) exceeded its instruction budget of 1000000 instructions
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules check tests/hostile/packs/lua-xpcall-handler-top.cw
  tests/hostile/packs/lua-xpcall-handler-top.cw:7:1: error: lua block (pack hostile.xpcall_handler_top) exceeded its instruction budget of 1000000 instructions
    xpcall(error, function(m) while true do end end) function f(a, b) return true end
    ^
  tests/hostile/packs/lua-xpcall-handler-top.cw:12:9: error: unknown Lua function 'f'
      where lua.f(from.ts, to.ts)
            ^~~~~~~~~~~~~~~~~~~~~
  hint: define it in a `lua [[ ... ]]` block of pack 'hostile.xpcall_handler_top' or of a pack it requires
  [1]

A script's error message reaches the terminal bounded, escaped and never empty: 10 MB
show as an excerpt and their size, a NUL and an escape sequence as text.

  $ timeout 20 causeway rules test tests/hostile/packs/lua-error-huge.cw
  FAIL hostile.error_huge "the hook runs"
  tests/hostile/packs/lua-error-huge.cw:17:1: error: tests/hostile/packs/lua-error-huge.cw:7: error: lua hook 'f' (pack hostile.error_huge, rule hostile.error_huge/hook.error_huge) failed: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… (10485760 bytes)
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules check tests/hostile/packs/lua-error-huge-top.cw
  tests/hostile/packs/lua-error-huge-top.cw:7:1: error: lua block (pack hostile.error_huge_top) failed: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… (10485760 bytes)
    error(string.rep("x", 10 * 1024 * 1024)) function f(a, b) return true end
    ^
  tests/hostile/packs/lua-error-huge-top.cw:12:9: error: unknown Lua function 'f'
      where lua.f(from.ts, to.ts)
            ^~~~~~~~~~~~~~~~~~~~~
  hint: define it in a `lua [[ ... ]]` block of pack 'hostile.error_huge_top' or of a pack it requires
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-error-nul.cw
  FAIL hostile.error_nul "the hook runs"
  tests/hostile/packs/lua-error-nul.cw:17:1: error: tests/hostile/packs/lua-error-nul.cw:7: error: lua hook 'f' (pack hostile.error_nul, rule hostile.error_nul/hook.error_nul) failed: before\x00after\x1b[2J
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

  $ timeout 20 causeway rules test tests/hostile/packs/lua-error-empty.cw
  FAIL hostile.error_empty "the hook runs"
  tests/hostile/packs/lua-error-empty.cw:17:1: error: tests/hostile/packs/lua-error-empty.cw:7: error: lua hook 'f' (pack hostile.error_empty, rule hostile.error_empty/hook.error_empty) failed: (an empty error message)
    test "the hook runs" {
    ^~~~
  0 passed, 1 failed
  [1]

A NUL byte inside a long string is refused as in a short one.

  $ timeout 20 causeway rules check tests/hostile/packs/nul-in-long-string.cw
  tests/hostile/packs/nul-in-long-string.cw:7:7: error: a NUL byte (byte 92) in a string
    x = "a\x00b"
          ^~~~
  hint: a string cannot hold a NUL; write the text without it
  [1]
