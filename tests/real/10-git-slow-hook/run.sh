#!/usr/bin/env bash
# git commit runs the repository's pre-commit hook and waits for it; the hook computes
# for 1.2 s on the CPU.
. "$(dirname "$0")/../lib.sh"
need git
here=$(cd "$(dirname "$0")" && pwd)
cd "$WORK"
git init -q repo
cd repo
cp "$here/pre-commit" .git/hooks/pre-commit
echo hello >README
git add README
git -c user.name=cw -c user.email=cw@example.invalid commit -q -m first ||
  die "git commit failed"
