Packs in a folder another user owns are not loaded (docs/rules.md "Where packs are found"):
root runs causeway in a project folder where a second user, cwtest2, made .causeway/rules;
her pack would change what root's diagnosis says. Needs root and a second local user
(made here when missing); skipped otherwise.

  $ [ "$(id -u)" = 0 ] || { echo "skip: needs root to act as two users"; exit 77; }
  $ id -u cwtest2 >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin cwtest2 || { echo "skip: cannot add the user cwtest2"; exit 77; }
  $ chmod 711 $TMP_DIR && mkdir -m 755 $TMP_DIR/her-project && chown cwtest2:cwtest2 $TMP_DIR/her-project && setpriv --reuid=cwtest2 --regid=cwtest2 --clear-groups mkdir -p -m 755 $TMP_DIR/her-project/.causeway/rules && printf 'pack hers {\n  version "0.1.0"\n  requires linux.kernel\n}\n\ndisable linux.kernel/message\n' | setpriv --reuid=cwtest2 --regid=cwtest2 --clear-groups tee $TMP_DIR/her-project/.causeway/rules/hers.cw >/dev/null
  $ cd $TMP_DIR/her-project && env -u XDG_DATA_HOME HOME=/nonexistent causeway rules list 2>&1 | sed "s|$TMP_DIR/||; s|uid [0-9]*,|uid UID,|" | head -1
  her-project/.causeway/rules: warning: the packs of this folder are not loaded: .causeway: owned by uid UID, neither this user (0) nor root
  $ cd $TMP_DIR/her-project && env -u XDG_DATA_HOME HOME=/nonexistent causeway rules list 2>/dev/null | grep -c hers
  0
  [1]
