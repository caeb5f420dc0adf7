#!/usr/bin/env bash
# A/B timing of two builds of the CLI that does not depend on where the linker put the code.
#
# The same object code runs a step up to ~4 % faster or slower when the text is shifted by 16
# bytes (loop and branch placement against the front end's 32- and 64-byte windows); a change
# anywhere in the library shifts the text, so comparing one link of A with one link of B measures
# that luck as much as the change. This script relinks bin/impulse of each build K times, each
# with a padding of a different size in front of the code, runs the command on every link in
# turn (A and B alternated, pinned to one processor), and prints each build's median over all its
# links and rounds, and their ratio.
#
# usage: scripts/ab_placements.sh [-k LINKS] [-r ROUNDS] [-c CPU] [-m PATTERN] [-f FIELD] BUILD_A BUILD_B -- ARGS...
#   BUILD_A, BUILD_B: build folders that hold bin/impulse (built by their build.ninja)
#   ARGS: the impulse command line, e.g. run models/worlds/anymal_stand.xml --steps 100000
#   -m PATTERN: the line of the command's output that holds the figure (default 'us/step median')
#   -f FIELD: which whitespace-separated field of that line (default: the last)
#   -k LINKS (default 8), -r ROUNDS per link (default 3), -c CPU to pin to (default 1)
set -euo pipefail

links=8 rounds=3 cpu=1 pattern='us/step median' field=0
while getopts "k:r:c:m:f:" opt; do
  case $opt in
    k) links=$OPTARG ;;
    r) rounds=$OPTARG ;;
    c) cpu=$OPTARG ;;
    m) pattern=$OPTARG ;;
    f) field=$OPTARG ;;
    *) echo "usage: $0 [-k LINKS] [-r ROUNDS] [-c CPU] [-m PATTERN] [-f FIELD] BUILD_A BUILD_B -- ARGS..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 3 ] || [ "$3" != "--" ]; then
  echo "usage: $0 [-k LINKS] [-r ROUNDS] [-c CPU] [-m PATTERN] [-f FIELD] BUILD_A BUILD_B -- ARGS..." >&2
  exit 2
fi
build_a=$1 build_b=$2
shift 3
for b in "$build_a" "$build_b"; do
  if [ ! -f "$b/build.ninja" ]; then echo "$0: $b: no build.ninja (not a ninja build folder)" >&2; exit 2; fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Paddings: 16-byte steps within a 64-byte window, and the same beyond the next pages.
pads=()
for ((i = 0; i < links; ++i)); do pads+=($(( (i / 4) * 1024 + (i % 4) * 16 ))); done

relink() {  # build tag: bin/impulse of the build with each padding in front of its objects
  local build=$1 tag=$2 cmd
  cmd=$(cd "$build" && ninja -t commands bin/impulse | tail -1 | sed 's/^: && //; s/ && :[[:space:]]*$//')
  if [[ "$cmd" != *" -o bin/impulse "* ]]; then echo "$0: $build: cannot read the link of bin/impulse" >&2; exit 2; fi
  for p in "${pads[@]}"; do
    printf '.section .note.GNU-stack,"",@progbits\n.text\npad_%s:\n.skip %d, 0x90\nret\n' "$p" "$p" > "$work/pad$p.s"
    gcc -c "$work/pad$p.s" -o "$work/pad$p.o" 2>/dev/null
    (cd "$build" && eval "${cmd/ -o bin\/impulse / -o $work/$tag$p $work/pad$p.o }")
  done
}
relink "$build_a" A
relink "$build_b" B

figure() {  # binary: the figure of one run
  local out
  out=$(taskset -c "$cpu" "$1" "${@:2}" | grep -m1 -- "$pattern" || true)
  if [ -z "$out" ]; then echo "$0: no line '$pattern' in the output of $*" >&2; exit 1; fi
  echo "$out" | awk -v f="$field" '{print (f > 0) ? $f : $NF}'
}
: > "$work/A" ; : > "$work/B"
for ((r = 0; r < rounds; ++r)); do
  for p in "${pads[@]}"; do
    figure "$work/A$p" "$@" >> "$work/A"
    figure "$work/B$p" "$@" >> "$work/B"
  done
done
median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ma=$(median "$work/A") mb=$(median "$work/B")
echo "A $build_a: median $ma over ${#pads[@]} links x $rounds rounds (min $(sort -g "$work/A" | head -1), max $(sort -g "$work/A" | tail -1))"
echo "B $build_b: median $mb over ${#pads[@]} links x $rounds rounds (min $(sort -g "$work/B" | head -1), max $(sort -g "$work/B" | tail -1))"
awk -v a="$ma" -v b="$mb" 'BEGIN {printf "A/B %.4f\n", a / b}'
