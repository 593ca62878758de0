#!/usr/bin/env bash
# A throw-away one-node Slurm cluster on loopback, for tests and trying
# `--dispatch slurm` (README, "Running with a cluster"):
#
#   eval "$(bash scripts/slurm-cluster.sh start DIR)"   # prints `export SLURM_CONF=...`
#   bash scripts/slurm-cluster.sh stop DIR
#
# Everything lives in DIR: the munge key and socket, slurm.conf, the state and
# spool directories, logs and the daemons' pids. munged, slurmctld and slurmd
# run in the foreground (-F / -D) as children of this script's caller's
# session and are killed by `stop`. `start` exits 77 (with the reason on
# stderr) when the daemons cannot start here, 0 once the node is idle.
set -euo pipefail

command=${1:-}
dir=${2:-}
if [ -z "$command" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi

stop_cluster() {
  for name in slurmd slurmctld munged; do
    if [ -f "$dir/$name.pid" ]; then
      pid=$(cat "$dir/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/$name.pid"
    fi
  done
}

if [ "$command" = stop ]; then
  stop_cluster
  exit 0
fi
[ "$command" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

skip() {
  echo "slurm-cluster: cannot start a local Slurm here: $*" >&2
  stop_cluster
  exit 77
}

for tool in munged mungekey slurmctld slurmd sbatch squeue scancel scontrol; do
  PATH=$PATH:/usr/sbin command -v "$tool" >/dev/null 2>&1 ||
    skip "'$tool' is missing (Debian packages munge, slurmctld, slurmd, slurm-client)"
done
[ "$(id -u)" = 0 ] || skip "the daemons run as root in this set-up, and this is uid $(id -u)"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 700 "$dir/munge"

# Two free loopback ports, asked from the kernel.
read -r ctld_port slurmd_port < <(/usr/bin/python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
EOF
)

rm -f "$dir/munge/munge.key"
/usr/sbin/mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 ||
  skip "mungekey could not create a key"
chmod 600 "$dir/munge/munge.key"
socket="$dir/munge/munge.socket"
/usr/sbin/munged -F --force --key-file="$dir/munge/munge.key" --socket="$socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
  >/dev/null 2>&1 &
echo $! > "$dir/munged.pid"
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || skip "munged did not start (log: $dir/log/munged.log)"

cat > "$dir/slurm.conf" <<EOF
ClusterName=accelopt-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/state/slurmctld.pid
SlurmdPidFile=$dir/spool/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
SchedulerParameters=sched_interval=1
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"

/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
echo $! > "$dir/slurmctld.pid"
/usr/sbin/slurmd -D -N localhost -f "$SLURM_CONF" >"$dir/log/slurmd.out" 2>&1 &
echo $! > "$dir/slurmd.pid"

# Up when the node is idle (slurmd registered with slurmctld).
for _ in $(seq 150); do
  for name in slurmctld slurmd; do
    kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null ||
      skip "$name exited: $(tail -n 3 "$dir/log/$name.log" "$dir/log/$name.out" 2>/dev/null | tr '\n' ' ')"
  done
  state=$(sinfo -h -N -o %t 2>/dev/null || true)
  if [ "$state" = idle ]; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
skip "the node did not become idle in 30 s (logs in $dir/log)"
