# cw-prog-hookstress (tests/programs/hookstress.c): the flag its 8 workers add to and the
# functions they call, so that `causeway record --rules` instruments all of them while the
# program runs (tests/record/instrument_stress.t).
pack test.stress {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "cw-prog-hookstress's flag and functions, traced by causeway record --rules"
}

flag stress_flag {
  symbol "stress_flag"
  binary "cw-prog-hookstress"
  size 4
}

# Naming the functions is what makes the recorder hook them.
batch stress.rounds {
  within call where fn == "stress_round"
  item call_enter where fn == "stress_work"
  neighbour none
}
