#!/usr/bin/python3
"""Runs a command against fake_openai.py, for lit tests.

usage: with_fake_endpoint.py SCRIPT.json RECORD CONFIG -- COMMAND [ARGS...]

Starts the fake endpoint with SCRIPT.json, writes an agent configuration to CONFIG whose every role
posts to it (no API key, no retries), runs COMMAND (the text @CONFIG@ in an argument is replaced by
CONFIG), and prints the command's stderr, its stdout, then "exit N".
"""
import json
import os
import subprocess
import sys

args = sys.argv[1:]
if len(args) < 5 or args[3] != "--":
    sys.exit(__doc__)
script, record, config, command = args[0], args[1], args[2], args[4:]
here = os.path.dirname(os.path.abspath(__file__))
server = subprocess.Popen([sys.executable, os.path.join(here, "fake_openai.py"), "--script", script,
                           "--record", record, "--max-seconds", "60"], stdout=subprocess.PIPE, text=True)
port = int(server.stdout.readline().split()[1])
endpoint = {"base_url": "http://127.0.0.1:%d/v1" % port, "model": "fake", "api_key_env": ""}
with open(config, "w") as f:
    json.dump({"defaults": endpoint, "max_retries": 0}, f)
run = subprocess.run([a.replace("@CONFIG@", config) for a in command], capture_output=True, text=True, timeout=120)
server.kill()
server.wait()
sys.stdout.write(run.stderr)
sys.stdout.write(run.stdout)
print("exit %d" % run.returncode)
