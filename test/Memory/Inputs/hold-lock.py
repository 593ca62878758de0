# Holds a write lock on an SQLite database while running a command, then
# prints the command's exit status ("exit N"). Usage: hold-lock.py DB CMD...
import sqlite3
import subprocess
import sys

conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("CREATE TABLE IF NOT EXISTS lock_holder(x)")
status = subprocess.call(sys.argv[2:])
conn.execute("ROLLBACK")
print("exit %d" % status)
