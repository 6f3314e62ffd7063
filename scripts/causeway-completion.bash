# bash completion for causeway (installed as share/bash-completion/completions/causeway).
# The commands and options are those of `causeway COMMAND --help`; tests/install.sh checks
# that every option listed here is one the command accepts.

_causeway_options() {
  case "$1" in
    graph) echo "--rules --no-stdlib --trace-format --json --edges --dot --no-cache --help" ;;
    debug) echo "--rules --no-stdlib --trace-format --hang --answers --save-answers --watch --auto --json --baseline --beam-width --lookback --min-hang --no-cache --help" ;;
    convert) echo "-o --output --to --trace-format --compress --shift-clock --help" ;;
    eval) echo "--suite --programs --keep --from --record-option --lose-switches --json --show --latency --help" ;;
    latency) echo "--base --buggy --normalize --pid --all-processes --comm --top --mode --threshold --trace-format --json --html --folded --help" ;;
    hangs) echo "--rules --no-stdlib --top --trace-format --json --no-cache --help" ;;
    ui) echo "--rules --no-stdlib --trace-format --no-cache --hang --answers --save-answers --port --no-browser --json --help" ;;
    export) echo "--format -o --output --rules --no-stdlib --hang --answers --min-hang --trace-format --all-processes --no-cache --help" ;;
    record) echo "-o --output -p --pid --stacks --call-graph -F --sample --buffer --full --calls --min-wait --wait-budget --wait-burst --pipe-bytes --compress --duration --rules --no-stdlib --flags --hooks --dir --help" ;;
    "record start") echo "--size -p --pid --stacks --call-graph -F --sample --buffer --full --calls --min-wait --wait-budget --wait-burst --pipe-bytes --compress --rules --no-stdlib --dir --help" ;;
    "record stop") echo "-o --output --compress --dir --help" ;;
    "record status") echo "--json --dir --help" ;;
    mark) echo "--dir --help" ;;
    "rules check" | "rules test") echo "--no-stdlib --help" ;;
    "rules fmt") echo "-w --write --check --help" ;;
    "rules kinds") echo "--json --help" ;;
    "rules list") echo "--rules --no-stdlib --json --help" ;;
    "rules which") echo "--rules --no-stdlib --help" ;;
    "rules new") echo "--program --library --help" ;;
    "rules install") echo "--project --force --help" ;;
    "flags suggest") echo "--pid --tid --duration --json --help" ;;
    "cache size") echo "--json --help" ;;
    "cache clean") echo "--all --older --help" ;;
    "fleet diagnose") echo "--list -o --store --rules --no-stdlib --no-cache --hang --hangs --min-hang --host --host-from-folder -j --jobs --json --help" ;;
    "fleet top") echo "--by -n --limit --json --help" ;;
    "fleet query") echo "--json --help" ;;
    "fleet schema") echo "--clickhouse --help" ;;
  esac
}

_causeway() {
  local cur prev words cword
  if declare -F _init_completion >/dev/null; then
    _init_completion || return
  else
    cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
  fi

  # The command: the first one or two words that are not options.
  local cmd="" i
  for ((i = 1; i < cword; i++)); do
    case "${words[i]}" in
      --) return ;;  # record's CMD: complete as a command line
      -*) ;;
      *)
        if [ -z "$cmd" ]; then
          cmd=${words[i]}
        elif [[ "$cmd" == rules || "$cmd" == flags || "$cmd" == cache || "$cmd" == fleet ]] ||
             [[ "$cmd" == record && "${words[i]}" =~ ^(start|stop|status)$ ]]; then
          cmd="$cmd ${words[i]}"
        fi
        ;;
    esac
  done

  case "$prev" in
    --stacks) COMPREPLY=($(compgen -W "blocking all none" -- "$cur")); return ;;
    --calls) COMPREPLY=($(compgen -W "syscalls scheduler" -- "$cur")); return ;;
    --flags) COMPREPLY=($(compgen -W "auto watch probe" -- "$cur")); return ;;
    --hooks) COMPREPLY=($(compgen -W "auto inline uprobe" -- "$cur")); return ;;
    --to) COMPREPLY=($(compgen -W "text binary" -- "$cur")); return ;;
    --format)
      if [ "$cmd" = export ]; then
        COMPREPLY=($(compgen -W "perfetto chrome dot" -- "$cur"))
      else  # the input form's old name
        COMPREPLY=($(compgen -W "auto binary text perf-script" -- "$cur"))
      fi
      return ;;
    --trace-format) COMPREPLY=($(compgen -W "auto binary text perf-script" -- "$cur")); return ;;
    --hang) COMPREPLY=($(compgen -W "auto" -- "$cur")); return ;;
    --by) COMPREPLY=($(compgen -W "signature version host day" -- "$cur")); return ;;
    --suite | --programs | --keep | --from | --dir | --save-answers)
      COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --rules | --dot | --answers | -o | --output | --base | --buggy | --html | --list | --store)
      COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --shift-clock | --pid | --tid | --duration | --buffer | --size | --beam-width | --lookback | --sample | --top | --threshold | --comm | --min-hang | --older | --host | --hangs | -j | --jobs | -n | --limit) return ;;
  esac

  case "$cmd" in
    "") COMPREPLY=($(compgen -W "graph debug ui hangs export latency convert eval record mark rules flags cache fleet --help --version" -- "$cur")) ;;
    rules) COMPREPLY=($(compgen -W "check test fmt kinds list which new install" -- "$cur")) ;;
    flags) COMPREPLY=($(compgen -W "suggest" -- "$cur")) ;;
    cache) COMPREPLY=($(compgen -W "size clean" -- "$cur")) ;;
    fleet) COMPREPLY=($(compgen -W "diagnose top query schema" -- "$cur")) ;;
    *)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(_causeway_options "$cmd")" -- "$cur"))
      elif [ "$cmd" = record ]; then
        COMPREPLY=($(compgen -W "start stop status" -- "$cur") $(compgen -c -- "$cur"))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
      fi
      ;;
  esac
}
complete -F _causeway causeway
