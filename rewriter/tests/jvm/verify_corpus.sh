#!/bin/sh
# JVM verification of the rewriter over real classes.
# For each jar in /usr/share/java (symlinks deduplicated) and each JDK 17 jmod:
# write the original and the rewritten classes to folders, load both sets in
# fresh child-first class loaders with verification forced, compare outcomes.
# usage: rewriter/tests/jvm/verify_corpus.sh [jars|jmods|all]   (after cargo build --release)
# RW_FLAGS: more orca-rewrite options for the rewritten set (RW_FLAGS=--guards)
set -eu
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
RW=$ROOT/target/release/orca-rewrite
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
WORK=${WORK:-/tmp/orca-verify}
rm -rf "$WORK"; mkdir -p "$WORK/h"
"$JAVA_HOME/bin/javac" -d "$WORK/h" "$ROOT/rewriter/tests/jvm/VerifyHarness.java"
OFF="--no-monitors --no-synchronized --no-object --no-thread --no-semaphore"
what=${1:-all}
inputs=""
if [ "$what" != jmods ]; then inputs="$inputs $(for j in /usr/share/java/*.jar; do readlink -f "$j"; done | sort -u)"; fi
if [ "$what" != jars ]; then inputs="$inputs $(ls "$JAVA_HOME"/jmods/*.jmod)"; fi
for f in $inputs; do
  b=$(basename "$f")
  "$RW" "$f" -o "$WORK/new/$b.d" --hash-at-birth ${RW_FLAGS:-} | head -1 | tee -a "$WORK/rewrite.log"
  "$RW" "$f" -o "$WORK/orig/$b.d" $OFF >/dev/null
  [ -d "$WORK/new/$b.d" ] || continue
  # A jar's copies of JDK packages (saxon's org.w3c.dom) come from the JDK, as on a class path.
  case $b in *.jar) jdkpk=-Dorca.jdkPackagesFromJdk=true ;; *) jdkpk=-Dorca.jdkPackagesFromJdk=false ;; esac
  "$JAVA_HOME/bin/java" -Xverify:all -XX:+UnlockDiagnosticVMOptions -XX:+BytecodeVerificationLocal $jdkpk \
     -cp "$WORK/h" VerifyHarness "$WORK/orig/$b.d" "$WORK/new/$b.d" 2>&1 | sed "s|^|  $b: |" | tee -a "$WORK/verify.log"
  rm -rf "$WORK/new/$b.d" "$WORK/orig/$b.d"
done
awk '{for(i=1;i<=NF;i++){split($i,kv,"=");if(kv[2]!=""&&kv[1]~/^(classes|same|bothOK|differ|newVerifyOrFormatErrors)$/)t[kv[1]]+=kv[2]}} END{printf "TOTAL verify:"; for(k in t) printf " %s=%d",k,t[k]; print ""}' "$WORK/verify.log"
awk '{c+=$2; m+=substr($5,2); u+=$7; s+=$9} END{print "TOTAL rewrite: changed=" c " methods=" m " unchanged=" u " skipped=" s}' FS='[ :]+' "$WORK/rewrite.log"
