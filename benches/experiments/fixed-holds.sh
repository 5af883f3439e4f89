#!/bin/bash
# CPU ns per uncontended `synchronized` hold (FixedHolds.java beside this script), from two
# runs of 100 and 600 million holds: (CPU(N2) - CPU(N1)) / (N2 - N1), so that start-up and the
# JIT cancel out. CPU time, not wall time, so that a busy machine shifts it less. No agent,
# the default, and guards=on (with guarded-fast-path.patch applied: every guarded hold skipped).
# Usage: benches/experiments/fixed-holds.sh JAVA_HOME ROUNDS   (after cargo build --release)
set -euo pipefail
J=$1; R=$2
here=$(cd "$(dirname "$0")" && pwd)
A=$here/../../target/release/liborca.so
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
"$J/bin/javac" -d "$w" "$here/FixedHolds.java"
N1=100000000; N2=600000000
cpu() { /usr/bin/time -f "%U %S" "$J/bin/java" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1+$2}'; }
for r in $(seq $R); do
  for m in none default guards; do
    case $m in none) a=();; default) a=(-agentpath:$A=$w/r);; guards) a=(-agentpath:$A=$w/r,guards=on);; esac
    c1=$(cpu "${a[@]}" -cp $w FixedHolds $N1)
    c2=$(cpu "${a[@]}" -cp $w FixedHolds $N2)
    echo "$r $m $(echo "($c2 - $c1) * 1000000000 / ($N2 - $N1)" | bc -l | cut -c1-6)"
  done
done
