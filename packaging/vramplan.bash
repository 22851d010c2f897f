# bash completion for vramplan: subcommands, each subcommand's options and catalogue ids.
# Everything is read from the installed binary (its --help, --help-all, `models --json` and
# `gpus --all --json`), so the completion never drifts from the version it completes.
# Installed to share/bash-completion/completions/vramplan; or: source packaging/vramplan.bash

_vramplan_ids() {  # the "id" of each entry of a listing: `vramplan models --json` or `gpus --all --json`
  "$1" "${@:2}" --json 2>/dev/null | sed -n 's/^      "id": "\([^"]*\)".*/\1/p'
}

_vramplan() {
  local exe=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W "$("$exe" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p')" -- "$cur"))
    return
  fi
  local cmd=${COMP_WORDS[1]}
  case $prev in
    --model)  # a catalogue id, or a file / folder (config.json, a checkpoint, a .gguf)
      COMPREPLY=($(compgen -W "$(_vramplan_ids "$exe" models)" -- "$cur") $(compgen -f -- "$cur"))
      return ;;
    --gpu)
      COMPREPLY=($(compgen -W "$(_vramplan_ids "$exe" gpus --all)" -- "$cur"))
      return ;;
    --engine)
      COMPREPLY=($(compgen -W "vllm sglang trtllm llamacpp hf" -- "$cur"))
      return ;;
    --format)
      COMPREPLY=($(compgen -W "table json markdown csv" -- "$cur"))
      return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$("$exe" "$cmd" --help-all 2>/dev/null | grep -o -- '--[a-z0-9][a-z0-9-]*' | sort -u)" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}

complete -F _vramplan vramplan
