#!/bin/sh
# Run an ascope analysis as a Slurm array job of N shards plus one merge job:
#   examples/slurm/submit.sh INPUT OUT [N]
# INPUT and OUT must be on storage that every node sees; the parts go to OUT.parts/. Prints the
# two job ids; the merged outputs appear in OUT when the merge job has finished (it runs only if
# every shard succeeded: --dependency=afterok).
# Environment: ASCOPE_COMMAND (memory, timeline, opjitter or moe; default memory; for moe INPUT is
# TARGET_DIR and ASCOPE_ARGS holds SOC_VERSION=...), ASCOPE_ARGS (more
# options for the command), ASCOPE_CPUS (CPUs per task, given to ascope as -j; default 2),
# ASCOPE (the executable; default ascope on PATH), SBATCH_ARGS (more sbatch options: partition,
# account, time limit).
set -eu
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 INPUT OUT [N]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
input=$(cd "$1" && pwd) || { echo "$0: $1: not a folder" >&2; exit 2; }
mkdir -p "$2"
out=$(cd "$2" && pwd)
n=${3:-8}
case "$n" in '' | *[!0-9]* | 0) echo "$0: N must be a whole number >= 1, not '$n'" >&2; exit 2 ;; esac
parts="$out.parts"
rm -rf "$parts"
mkdir -p "$parts"
cpus=${ASCOPE_CPUS:-2}
export ASCOPE_INPUT="$input" ASCOPE_PARTS="$parts" ASCOPE_OUT="$out" ASCOPE_SHARDS="$n"
export ASCOPE_COMMAND="${ASCOPE_COMMAND:-memory}" ASCOPE_ARGS="${ASCOPE_ARGS:-}" ASCOPE="${ASCOPE:-ascope}"
# shellcheck disable=SC2086 # SBATCH_ARGS is a list of words
array=$(sbatch --parsable ${SBATCH_ARGS:-} --array="1-$n" --cpus-per-task="$cpus" --export=ALL \
  --output="$parts/shard-%a.log" "$here/ascope-array.sbatch")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_ARGS:-} --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --cpus-per-task="$cpus" --export=ALL --output="$parts/merge.log" "$here/ascope-merge.sbatch")
merge=${merge%%;*}
echo "array job $array: $n shard(s) of 'ascope $ASCOPE_COMMAND $input' -> $parts"
echo "merge job $merge: runs after every shard succeeded -> $out"
echo "$array $merge"
