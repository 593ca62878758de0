#!/usr/bin/env bash
# Starts the scripted OpenAI stand-in on 127.0.0.1, writes an agent config for
# it to $1, then runs the rest of the arguments; the server stops by itself.
#   with-fake-llm.sh CONFIG SCRIPT RECORD -- command...
set -euo pipefail
config=$1 script=$2 record=$3
shift 4
here=$(cd "$(dirname "$0")" && pwd)
fake=$here/../../Agent/Inputs/fake_openai.py
portfile=$(mktemp)
/usr/bin/python3 "$fake" --script "$script" --record "$record" --max-seconds 60 > "$portfile" &
server=$!
for _ in $(seq 100); do grep -q PORT "$portfile" && break; sleep 0.1; done
port=$(awk '/PORT/ {print $2}' "$portfile")
rm -f "$portfile"
cat > "$config" <<JSON
{"defaults": {"base_url": "http://127.0.0.1:$port/v1", "model": "fake-model", "api_key_env": "ACCELOPT_TEST_KEY",
              "timeout_s": 10, "price_per_million_input": 1.0, "price_per_million_output": 4.0},
 "max_retries": 3, "fixer_retries": 2}
JSON
status=0
ACCELOPT_TEST_KEY=sk-test-secret-123 "$@" || status=$?
kill "$server" 2>/dev/null || true
exit $status
