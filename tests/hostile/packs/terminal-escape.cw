pack hostile.terminal_escape {
  version "0.1.0"
  requires linux.kernel
}
# title: ]0;pwned

edge e {
  link wakeup
  where from.syscall.name == "x" \x1b[2J and bogus\x1b[31m
  strength weak
  kind hostile
}
