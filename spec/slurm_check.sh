#!/bin/sh
# make slurm-check: a one-node Slurm cluster in a temporary folder (munged, slurmctld, slurmd,
# all run as root from there, nothing under /etc touched), the examples/slurm scripts submitted
# over a generated 12-rank tree for memory, timeline and opjitter and a generated 12-card MoE
# cluster for moe, and the merged outputs
# compared byte for byte with a single-process run. Prints a table of the times measured in this
# run. Every daemon started here is stopped on the way out, also on failure or interrupt.
#   ASCOPE_BUILD   build folder (default build)
#   SLURM_SHARDS   array size (default 4)
#   SLURM_EVENTS   operators per rank unit of the generated tree (default 3000; ranks are 1x-5x)
#   SLURM_TIMEOUT  seconds to wait for each array + merge (default 240)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=${ASCOPE_BUILD:-build}
ASCOPE_BIN="$TOP/$B/ascope"
SHARDS=${SLURM_SHARDS:-4}
EVENTS=${SLURM_EVENTS:-3000}
TIMEOUT=${SLURM_TIMEOUT:-240}

fail() {
  echo "slurm-check: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || fail "needs root: slurmd starts the jobs' processes (run it in CI, or with sudo)"
for p in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$p" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin"
  command -v "$p" >/dev/null 2>&1 || fail "$p not found: apt-get install slurmctld slurmd slurm-client munge"
done
[ -x "$ASCOPE_BIN" ] || fail "$ASCOPE_BIN not built (make)"

T=$(mktemp -d /tmp/ascope-slurm-XXXXXX)
chmod 755 "$T"
PIDS=""
stop_all() {
  # jobs still running (a timeout, an interrupt) are cancelled while slurmd can still end them
  if [ -n "$PIDS" ] && [ -f "$T/slurm.conf" ]; then
    scancel --quiet --user=root 2>/dev/null
    i=0
    while [ -n "$(squeue -h 2>/dev/null)" ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
  fi
  for pid in $PIDS; do kill "$pid" 2>/dev/null; done
  for pid in $PIDS; do
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$pid" 2>/dev/null
  done
  if [ "${KEEP:-}" = "" ]; then rm -rf "$T"; else echo "slurm-check: kept $T"; fi
}
trap stop_all EXIT
trap 'exit 130' INT TERM HUP

# --- munge: its own key, socket, pid and log in T
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/log"
chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$T/munge/munge.key"
SOCK="$T/munge/munge.socket"
munged --foreground --force --key-file="$T/munge/munge.key" --socket="$SOCK" --pid-file="$T/munge/munged.pid" \
  --log-file="$T/log/munged.log" --seed-file="$T/munge/munged.seed" >"$T/log/munged.out" 2>&1 &
PIDS="$PIDS $!"
i=0
while [ ! -S "$SOCK" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$SOCK" ] || { cat "$T/log/munged.out" "$T/log/munged.log" >&2; fail "munged did not start"; }

# --- slurm.conf: one node (this machine, all its CPUs), one partition, ports picked free
CPUS=$(nproc)
MEM=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
port_free() { ! (ss -ltn 2>/dev/null | awk '{print $4}' | grep -q ":$1\$"); }
PORT=$((20000 + $$ % 20000))
while ! port_free "$PORT" || ! port_free $((PORT + 1)); do PORT=$((PORT + 2)); done
export SLURM_CONF="$T/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=ascopecheck
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MinJobAge=600
PlugStackConfig=$T/plugstack.conf
NodeName=ascopenode NodeHostname=$(uname -n) NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=check Nodes=ascopenode Default=YES MaxTime=30 State=UP
EOF
: >"$T/plugstack.conf"

slurmctld -D -i -f "$SLURM_CONF" >"$T/log/slurmctld.out" 2>&1 &
PIDS="$PIDS $!"
slurmd -D -N ascopenode -f "$SLURM_CONF" >"$T/log/slurmd.out" 2>&1 &
PIDS="$PIDS $!"
show_logs() { tail -n 20 "$T"/log/*.log "$T"/log/*.out >&2 2>/dev/null; }
i=0
until sinfo -h -N -o '%T' 2>/dev/null | grep -q idle; do
  i=$((i + 1))
  [ $i -lt 300 ] || { show_logs; fail "the node did not come up within 30 s"; }
  sleep 0.1
done

# --- the tree, and the single-process runs
"$ASCOPE_BIN" run "$TOP/spec/gen_tree.lua" "$T/tree" 12 "$EVENTS" || fail "cannot generate the tree"
TREE_MB=$(du -sm "$T/tree" | cut -f1)
"$ASCOPE_BIN" run "$TOP/spec/gen_moe.lua" "$T/moe" || fail "cannot generate the MoE cluster"
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }

ok=0
ROWS=""
for cmd in memory timeline opjitter moe; do
  input=$T/tree args="" single="$T/tree"
  [ "$cmd" = moe ] && input=$T/moe args="SOC_VERSION=950" single="TARGET_DIR=$T/moe"
  t0=$(now)
  # shellcheck disable=SC2086 # args is a list of words
  "$ASCOPE_BIN" "$cmd" "$single" $args -j "$CPUS" -o "$T/single-$cmd" -q >"$T/single-$cmd.out" 2>&1
  single_rc=$?
  t1=$(now)
  out=$(ASCOPE="$ASCOPE_BIN" ASCOPE_COMMAND="$cmd" ASCOPE_ARGS="$args" ASCOPE_CPUS=1 \
    sh "$TOP/examples/slurm/submit.sh" "$input" "$T/merged-$cmd" "$SHARDS") || { show_logs; fail "submit.sh failed: $out"; }
  echo "$out" | sed '$d'
  ids=$(echo "$out" | tail -n 1)
  array=${ids% *} merge=${ids#* }
  i=0
  while [ -n "$(squeue -h -j "$array,$merge" 2>/dev/null)" ]; do
    i=$((i + 1))
    [ $i -lt $((TIMEOUT * 5)) ] || { squeue >&2; show_logs; fail "$cmd: jobs still queued after $TIMEOUT s"; }
    sleep 0.2
  done
  t2=$(now)
  state=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1)
  merge_rc=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p' | head -n 1)
  if [ "$single_rc" = 0 ] && [ "$state" != COMPLETED ]; then
    cat "$T/merged-$cmd.parts"/*.log >&2 2>/dev/null
    show_logs
    fail "$cmd: merge job $merge ended $state"
  fi
  [ "${merge_rc:-x}" = "$single_rc" ] || fail "$cmd: merge exit code ${merge_rc:-?}, single run $single_rc"
  if diff -r "$T/single-$cmd" "$T/merged-$cmd" >"$T/diff-$cmd" 2>&1; then
    n=$(find "$T/single-$cmd" -type f | wc -l)
    echo "slurm-check: $cmd: $n output file(s) of the $SHARDS-shard array job + merge are the single run's, byte for byte"
    ok=$((ok + 1))
  else
    head -n 20 "$T/diff-$cmd" >&2
    echo "slurm-check: $cmd: merged outputs differ from the single run" >&2
  fi
  # the merge step alone, on the same parts (outside Slurm, to a scratch folder)
  t3=$(now)
  "$ASCOPE_BIN" merge "$T/merged-$cmd.parts"/part-* -j "$CPUS" -o "$T/remerge-$cmd" -q >/dev/null 2>&1
  t4=$(now)
  ROWS="$ROWS
| $cmd | $(elapsed "$t0" "$t1") | $(elapsed "$t1" "$t2") | $(elapsed "$t3" "$t4") |"
done

echo
echo "generated tree: 12 ranks, $TREE_MB MB; MoE cluster: 12 cards, $(du -sm "$T/moe" | cut -f1) MB; node: 1 x $CPUS CPU(s); array: $SHARDS shard(s) x 1 CPU, then one merge"
echo
echo "| command | single process, -j $CPUS (s) | array job + merge job, submit to merged outputs (s) | merge step alone, re-run on the same parts (s) |"
echo "|---|---|---|---|"
echo "$ROWS" | sed '1d'
[ $ok = 4 ] || fail "$((4 - ok)) command(s) did not merge to the single run"
echo "slurm-check: passed"
