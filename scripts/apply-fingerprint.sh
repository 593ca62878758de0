#!/usr/bin/env bash
# Wrapper: bash scripts/apply-fingerprint.sh BINDIR [options of apply-fingerprint.py]
exec /usr/bin/python3 "$(dirname "$0")/apply-fingerprint.py" "$@"
