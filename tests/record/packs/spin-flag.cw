# cw-prog-spin's ready_flag (tests/programs/spin.c) as a data flag: cw-setter's store
# ends cw-spinner's polling loop, a write -> read edge only this declaration makes.
pack test.spin {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "cw-prog-spin's ready_flag, traced by causeway record --rules"
}

flag ready_flag {
  symbol "ready_flag"
  binary "cw-prog-spin"
  size 4
}
