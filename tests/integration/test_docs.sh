#!/usr/bin/env bash
# test_docs.sh - the generated configuration reference matches the tables
# compiled into the daemons (regenerate with `make docs`).
. "$(dirname "$0")/lib.sh"
sh "$ROOT/docs/gen-configuration.sh" "$BIN" >"$T/configuration.md"
check "docs/configuration.md is current (make docs)" diff -u "$ROOT/docs/configuration.md" "$T/configuration.md"
finish
