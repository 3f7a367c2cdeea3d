#!/usr/bin/env bash
# backend: cuda on a machine (or build) without a usable CUDA device: exit 2,
# a message naming the field and the fix, and no output folder left behind.
# Skips (77) where a device exists: there the run is expected to work.
set -u
HEXCG=$1; CASE=$2; OUT=$3
rm -rf "$OUT"
if "$HEXCG" --version | grep -q "cuda (runtime [0-9.]*; device"; then
  echo "SKIP: a CUDA device is present"; exit 77
fi
err=$("$HEXCG" run "$CASE" --set backend=cuda --output "$OUT" --quiet 2>&1 >/dev/null); rc=$?
[[ $rc == 2 ]] || { echo "exit status $rc, expected 2: $err"; exit 1; }
[[ $err == *"backend: "*"use 'backend: cpu' (or --set backend=cpu)"* ]] || { echo "message: $err"; exit 1; }
[[ ! -e $OUT ]] || { echo "output folder $OUT left behind"; exit 1; }
echo "no-device run refused cleanly"
