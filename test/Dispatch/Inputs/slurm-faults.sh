#!/usr/bin/env bash
# Driver of test/Dispatch/slurm.test: starts a throw-away one-node Slurm, runs
# optimize locally and with --dispatch slurm under faults (a task cancelled
# mid-run, the node drained, the submitting process killed then --resume, a task
# past its time limit, the node failed), with --backend neuron on the SDK
# stand-in, and prints one line per check for FileCheck.
# Usage: slurm-faults.sh ACCELOPT SRCROOT WORKDIR
set -uo pipefail
accelopt=$1 srcroot=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cluster="$work/cluster"
trap 'bash "$srcroot/scripts/slurm-cluster.sh" stop "$cluster"' EXIT
started=$(bash "$srcroot/scripts/slurm-cluster.sh" start "$cluster")
rc=$?
if [ $rc -ne 0 ]; then
  echo "cluster: not started (exit $rc)"
  exit 1
fi
eval "$started"
echo "cluster: up"

kernel="$srcroot/nkibench/pairs/spill_buffer_before.py"
args=("$kernel" --case spill_buffer_before --iterations 2 --seed 3)

same() {  # same best ops and speed-up as the local run
  /usr/bin/python3 -c "
import json, sys
a = json.load(open('$work/local/report.json')); b = json.load(open(sys.argv[1] + '/report.json'))
print('same', a['best_ops'] == b['best_ops'] and abs(a['speedup'] - b['speedup']) < 1e-12)" "$1"
}
ran_on_slurm() {
  /usr/bin/python3 -c "
import json, sys
c = json.load(open(sys.argv[1] + '/candidates.json'))
print('ran on slurm', sum(x['ran_on'].startswith('slurm job') for x in c[1:]), 'of', len(c) - 1)" "$1"
}
task_of() {  # the first RUNNING task of our jobs, e.g. 4_0
  squeue -h -r -t running -n accelopt-eval -o %i | sort -t_ -k1,1n -k2,2n | head -n 1
}
wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND prints something
  local deadline=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $deadline ]; do
    out=$("$@" 2>/dev/null)
    [ -n "$out" ] && { echo "$out"; return 0; }
    sleep 0.2
  done
  return 1
}

start=$SECONDS
"$accelopt" "${args[@]}" -j 2 --memory none --quiet --report "$work/local" > /dev/null || echo "local run failed"
echo "local: $((SECONDS - start)) s" >&2

# 1. A task cancelled mid-run is retried once; the result equals the local run.
start=$SECONDS
ACCELOPT_FAULT_WORKER_HOLD=60 "$accelopt" "${args[@]}" --dispatch slurm --slurm-dir "$work/shared1" \
  --memory "$work/m1.db" --report "$work/slurm1" > /dev/null 2> "$work/slurm1.err" &
pid=$!
held=$(wait_for 60 task_of) && scancel "$held" && echo "cancelled one task"
wait $pid && echo "slurm run: exit 0"
echo "slurm: $((SECONDS - start)) s" >&2
grep -o "ended CANCELLED.*; retrying" "$work/slurm1.err" | head -n 1
same "$work/slurm1"
ran_on_slurm "$work/slurm1"

# 2. Drained node: tasks wait (the reason is shown), and finish once the node is back.
scontrol update nodename=localhost state=drain reason=accelopt-test
"$accelopt" "${args[@]}" --dispatch slurm --slurm-dir "$work/shared2" --memory none \
  --report "$work/slurm2" > /dev/null 2> "$work/slurm2.err" &
pid=$!
wait_for 60 grep -m1 -o "pending (.*)" "$work/slurm2.err" | sed 's/(.*/(REASON)/'
scontrol update nodename=localhost state=resume
wait $pid && echo "drained run: exit 0"
same "$work/slurm2"

# 3. The submitting process is killed with tasks in flight; --resume follows
#    or reuses them, and no candidate is evaluated twice.
"$accelopt" "${args[@]}" --dispatch slurm --slurm-dir "$work/shared3" --memory "$work/m3.db" \
  --report "$work/never" > /dev/null 2> "$work/slurm3a.err" &
pid=$!
wait_for 60 task_of > /dev/null && kill -9 $pid
wait $pid 2>/dev/null
echo "submitter killed: $(ls "$work/shared3"/*/result | wc -l) results so far" >&2
"$accelopt" "${args[@]}" --dispatch slurm --slurm-dir "$work/shared3" --memory "$work/m3.db" --resume \
  --report "$work/slurm3" > /dev/null 2> "$work/slurm3b.err" && echo "resumed run: exit 0"
# "slurm: S tasks submitted, R retried, F failed, U results reused from DIR, A followed from an earlier run"
grep "^slurm: .* tasks submitted" "$work/slurm3b.err" |
  awk '{print ($9 + $14 > 0 ? "picked up from the killed run" : "nothing picked up: " $0)}'

same "$work/slurm3"
run3=$(ls -d "$work/shared3"/*/)
echo "tasks run $(ls "$run3/log" | wc -l), results $(ls "$run3/result" | wc -l)" |
  awk '{print ($3 + 0 == $5 + 0 ? "each candidate evaluated once" : "evaluated twice: " $0)}'

# 4. bench --dispatch slurm: the local table, then where each case ran.
"$accelopt" bench --own > "$work/bench-local.txt" 2>/dev/null
"$accelopt" bench --own --dispatch slurm --slurm-dir "$work/shared4" > "$work/bench-slurm.txt" 2>/dev/null &&
  echo "slurm bench: exit 0"
head -n "$(wc -l < "$work/bench-local.txt")" "$work/bench-slurm.txt" | cmp -s - "$work/bench-local.txt" &&
  echo "bench: same table"
echo "bench cases on slurm: $(grep -c ': slurm job [0-9]*_[0-9]* on localhost$' "$work/bench-slurm.txt") of $(grep -c '^  ' <(sed -n '/^where each case ran:/,$p' "$work/bench-slurm.txt"))"

# 5. --backend neuron on the nodes: the worker measures with the SDK (here the
#    recorded-fixture stand-in, test/Profile/Inputs/fake-neuron-sdk, first on
#    PATH/PYTHONPATH of the submitter, whose environment the tasks inherit) and
#    with the submitter's --neuron-* options: one run gives the recorded minimum,
#    ten would give the recorded mean.
sdk="$srcroot/test/Profile/Inputs/fake-neuron-sdk"
neuron_env=(env "PATH=$sdk/bin:$PATH" "PYTHONPATH=$sdk/python" "NEURON_PLATFORM_TARGET_OVERRIDE=trn1"
  "FAKE_NEURON_RECORDS=$srcroot/nkibench/upstream/measured/trn1_baselines.json" ACCELOPT_NEURON_PYTHON=/usr/bin/python3)
neuron_args=("$srcroot/test/Profile/Inputs/exp_add.py" --inputs 'x=f32[256,512]' --backend neuron --neuron-runs 1
  --neuron-warmup 0 --iterations 1 --beam 1 --plans 2 --samples 1 --check-all --memory none --quiet)
"${neuron_env[@]}" "$accelopt" "${neuron_args[@]}" -j 2 --report "$work/neuron-local" > /dev/null 2>&1 ||
  echo "neuron local run failed"
"${neuron_env[@]}" "$accelopt" "${neuron_args[@]}" --dispatch slurm --slurm-dir "$work/shared5" \
  --report "$work/neuron-slurm" > /dev/null 2> "$work/neuron-slurm.err" && echo "neuron slurm run: exit 0"
/usr/bin/python3 -c "
import json, sys
local = json.load(open('$work/neuron-local/candidates.json'))
remote = json.load(open('$work/neuron-slurm/candidates.json'))
key = lambda c: (json.dumps(c['ops'], sort_keys=True), c['status'], c['latency_ms'], c['error'])
print('neuron: same verdicts', sorted(map(key, local)) == sorted(map(key, remote)))
print('neuron: candidates on slurm', sum(c['ran_on'].startswith('slurm job') for c in remote[1:]), 'of', len(remote) - 1)
print('neuron: backend', json.load(open('$work/neuron-slurm/report.json')).get('backend'))
"

# 6. A task past its time limit (--slurm-opts --time=1, one minute, Slurm's
#    smallest): the held candidate times out, is retried once, times out again
#    and is marked failed with Slurm's reason; the search finishes with the
#    others, and the memory holds the failed candidate's whole verdict.
start=$SECONDS
ACCELOPT_FAULT_WORKER_HOLD=300 ACCELOPT_FAULT_WORKER_HOLD_ATTEMPTS=2 "$accelopt" "$kernel" --case spill_buffer_before \
  --iterations 1 --seed 3 --dispatch slurm --slurm-opts "--time=1" --slurm-dir "$work/shared6" --memory "$work/m6.db" \
  --report "$work/slurm6" > /dev/null 2> "$work/slurm6.err" && echo "timeout run: exit 0"
echo "timeout run: $((SECONDS - start)) s" >&2
grep -o "ended TIMEOUT.*; retrying" "$work/slurm6.err" | head -n 1
grep -o "ended TIMEOUT.*; marked failed" "$work/slurm6.err" | head -n 1
/usr/bin/python3 -c "
import json
c = json.load(open('$work/slurm6/candidates.json'))
print('timed out:', [x['status'] + ': ' + x['error'] for x in c if 'TIMEOUT' in x['error']])
"
"$accelopt" memory export "$work/m6.json" --db "$work/m6.db" > /dev/null
/usr/bin/python3 -c "
import json
d = json.load(open('$work/m6.json'))
print('memory:', [(x.get('status'), x.get('error')) for x in d['candidates'] if 'TIMEOUT' in (x.get('error') or '')])
"

# 7. The node fails under running tasks (slurmd killed): with --no-requeue they
#    end NODE_FAIL, are resubmitted, wait for the node, and the run ends with the
#    local run's result.
ACCELOPT_FAULT_WORKER_HOLD=120 "$accelopt" "${args[@]}" --dispatch slurm --slurm-dir "$work/shared7" \
  --memory none --report "$work/slurm7" > /dev/null 2> "$work/slurm7.err" &
pid=$!
wait_for 60 task_of > /dev/null && kill -9 "$(cat "$cluster/slurmd.pid")" && echo "slurmd killed"
wait_for 150 grep -m1 -o "ended NODE_FAIL on localhost; retrying" "$work/slurm7.err"
/usr/sbin/slurmd -D -N localhost -f "$SLURM_CONF" > "$cluster/log/slurmd.out" 2>&1 &
echo $! > "$cluster/slurmd.pid"
wait $pid && echo "node-fail run: exit 0"
same "$work/slurm7"
