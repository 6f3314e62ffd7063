Writing, checking and sharing packs (docs/rules.md "Sharing packs"). `rules new` writes a
pack skeleton with a test that passes as written.

  $ cd $TMP_DIR && causeway rules new acme.server
  wrote acme-server/pack.cw and acme-server/tests.cw (pack acme.server)
  next: edit them, then
    causeway rules test acme-server
    causeway rules install acme-server
  $ cd $TMP_DIR && causeway rules test acme-server
  PASS acme.server "each request is a segment of its own"
  1 passed, 0 failed
  $ cd $TMP_DIR && grep -E "^  applies|^split|fn ==" acme-server/pack.cw
    applies program("server")
  split request.begin {
    where fn == "handle_request"
  $ cd $TMP_DIR && causeway rules new acme.server
  causeway: rules new: acme-server exists; give another DIR
  [1]
  $ cd $TMP_DIR && causeway rules new 9lives
  causeway: rules new: '9lives' is not a pack id (dotted names: acme.server)
  [1]
  $ cd $TMP_DIR && causeway rules new acme.proxy proxy-pack --program 'acme-proxy*' --library 'libacme.so*' >/dev/null && grep "^  applies" proxy-pack/pack.cw
    applies program("acme-proxy*"), library("libacme.so*")

`rules install` checks the pack and runs its tests, then copies it into the user's folder
(made when missing, writable by nobody else), where every command finds it.

  $ mkdir -m 755 $TMP_DIR/sharehome
  $ cd $TMP_DIR && HOME=$TMP_DIR/sharehome causeway rules install acme-server | sed "s|$TMP_DIR/||"
  installed acme.server 0.1.0 (1 test passed) into sharehome/.local/share/causeway/rules/acme.server
  $ ls $TMP_DIR/sharehome/.local/share/causeway/rules/acme.server
  pack.cw
  tests.cw
  $ stat -c %a $TMP_DIR/sharehome/.local/share/causeway/rules
  755
  $ HOME=$TMP_DIR/sharehome causeway rules list | grep acme | sed "s|$TMP_DIR/||"
  acme.server 0.1.0  sharehome/.local/share/causeway/rules/acme.server/pack.cw

Installing it again needs --force; the copy being edited replaces the installed one in
every command meanwhile (no duplicate pack id).

  $ cd $TMP_DIR && HOME=$TMP_DIR/sharehome causeway rules install acme-server 2>&1 | sed "s|$TMP_DIR/||"
  causeway: rules install: acme.server is installed already (sharehome/.local/share/causeway/rules/acme.server); --force replaces it
  $ cd $TMP_DIR && sed -i 's/version "0.1.0"/version "0.2.0"/' acme-server/pack.cw && HOME=$TMP_DIR/sharehome causeway rules check acme-server | head -1
  1 pack checked (acme.server), 0 warnings
  $ cd $TMP_DIR && HOME=$TMP_DIR/sharehome causeway rules install acme-server --force | sed "s|$TMP_DIR/||"
  installed acme.server 0.2.0 (1 test passed) into sharehome/.local/share/causeway/rules/acme.server
  it replaced the pack installed there before

Only the pack's regular files are copied: a link in its folder is neither followed nor
copied.

  $ cd $TMP_DIR && ln -s /etc/hostname acme-server/elsewhere && HOME=$TMP_DIR/sharehome causeway rules install acme-server --force >/dev/null && ls $TMP_DIR/sharehome/.local/share/causeway/rules/acme.server
  pack.cw
  tests.cw

A pack whose tests fail, or that has none, is not installed, and what was there stays.

  $ cd $TMP_DIR && sed -i 's/at 3ms rule/at 2ms rule/' acme-server/tests.cw && HOME=$TMP_DIR/sharehome causeway rules install acme-server --force 2>&1 | grep -E "^FAIL|^causeway"
  FAIL acme.server "each request is a segment of its own"
  causeway: rules install: the tests of pack acme.server fail: not installed
  $ cd $TMP_DIR && printf 'pack lonely { version "1.0.0" }\n' > lonely.cw && HOME=$TMP_DIR/sharehome causeway rules install lonely.cw
  causeway: rules install: pack lonely has no tests: a pack is installed only when its tests pass (add a `test`; `causeway rules new` writes a pack with one)
  [1]
  $ HOME=$TMP_DIR/sharehome causeway rules list | grep acme | cut -d' ' -f1-2
  acme.server 0.2.0

A test that reads a file beside the pack but outside it passes where the pack is, not once
copied: the install stops and leaves nothing behind.

  $ mkdir $TMP_DIR/far && causeway convert examples/slow-server.trace -o $TMP_DIR/far/slow.cwt >/dev/null 2>&1 && cd $TMP_DIR && mkdir far/pack && printf 'pack far.away {\n  version "1.0.0"\n  requires linux.kernel\n}\ntest "reads a trace outside" {\n  trace file "../slow.cwt"\n  expect hang 811 kind LongWait\n}\n' > far/pack/pack.cw && causeway rules test far/pack | tail -1
  1 passed, 0 failed
  $ cd $TMP_DIR && HOME=$TMP_DIR/sharehome causeway rules install far/pack 2>&1 | grep "^causeway"
  causeway: rules install: once copied: the tests of pack far.away fail: not installed (does a test read a file outside the pack?)
  $ ls -A $TMP_DIR/sharehome/.local/share/causeway/rules
  acme.server

A folder that others can write is refused, as the search path refuses it.

  $ chmod 777 $TMP_DIR/sharehome/.local/share/causeway/rules && cd $TMP_DIR && HOME=$TMP_DIR/sharehome causeway rules install proxy-pack 2>&1 | grep "^causeway" | sed "s|$TMP_DIR/||"
  causeway: rules install: sharehome/.local/share/causeway/rules: causeway would not load packs from it: others can write it
  $ chmod 755 $TMP_DIR/sharehome/.local/share/causeway/rules

`requires` takes a version range: a pack that needs a version of another that is not the
one loaded is an error that names both, and two packs whose ranges cannot both hold are
named as a conflict.

  $ mkdir $TMP_DIR/ranges && printf 'pack base { version "0.3.0" }\n' > $TMP_DIR/ranges/base.cw && printf 'pack newer { version "1.0.0"\n  requires base(">= 0.4") }\n' > $TMP_DIR/ranges/newer.cw && printf 'pack older { version "1.0.0"\n  requires base("< 0.3") }\n' > $TMP_DIR/ranges/older.cw
  $ causeway rules check --no-stdlib $TMP_DIR/ranges/base.cw $TMP_DIR/ranges/newer.cw 2>&1 | sed "s|$TMP_DIR/||"
  ranges/newer.cw:2:12: error: pack 'newer' requires base ">= 0.4", but base 0.3.0 is loaded
      requires base(">= 0.4") }
               ^~~~~~~~~~~~~~
  hint: base 0.3.0 is loaded from ranges/base.cw
  hint: load a copy of base in the range (--rules, a search folder)
  $ causeway rules check --no-stdlib $TMP_DIR/ranges/base.cw $TMP_DIR/ranges/newer.cw $TMP_DIR/ranges/older.cw 2>&1 | grep conflicts | sed "s|$TMP_DIR/||"
  hint: it conflicts with pack 'older', which requires base "< 0.3" (ranges/older.cw:2): no version of base is in both ranges
  hint: it conflicts with pack 'newer', which requires base ">= 0.4" (ranges/newer.cw:2): no version of base is in both ranges
  $ sed -i 's/0.3.0/0.5.0/' $TMP_DIR/ranges/base.cw && causeway rules check --no-stdlib $TMP_DIR/ranges/base.cw $TMP_DIR/ranges/newer.cw
  2 packs checked (base, newer), 0 warnings
