#!/bin/sh
# Side-by-side throughput: orca-rewriter (cargo bench) and ASM (benches/asm/AsmBench.java)
# over the JDK 17 jmods, single-threaded. Needs Debian's libasm-java (/usr/share/java/asm.jar).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
ASM=${ASM_JAR:-/usr/share/java/asm.jar}
OUT=${TMPDIR:-/tmp}/orca-asm-bench
mkdir -p "$OUT"
"$JAVA_HOME/bin/javac" -nowarn -cp "$ASM" -d "$OUT" "$ROOT/rewriter/benches/asm/AsmBench.java"
cd "$ROOT"
ORCA_CORPUS_JDK=$JAVA_HOME cargo bench -j2 -q -p orca-rewriter --bench throughput 2>/dev/null | tee "$OUT/orca.txt"
"$JAVA_HOME/bin/java" -cp "$ASM:$OUT" AsmBench "$JAVA_HOME/jmods" 5 | tee "$OUT/asm.txt"
o=$(awk '/whole corpus/ {for(i=1;i<=NF;i++) if($i=="classes/s") print $(i-1)}' "$OUT/orca.txt")
a=$(awk '/whole corpus/ {for(i=1;i<=NF;i++) if($i=="classes/s") print $(i-1)}' "$OUT/asm.txt")
echo "ratio orca/ASM (whole corpus, classes/s): $(echo "$o $a" | awk '{printf "%.1f", $1/$2}')x"
