# A pack that disables a stdlib rule whose id it misspells.
pack bad.disable {
  version "0.1.0"
  requires linux.kernel
}

disable linux.kernel/wait.entyr
