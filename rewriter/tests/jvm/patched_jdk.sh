#!/bin/sh
# The whole JDK rewritten: every module's classes are rewritten and patched
# into the runtime (--patch-module), with a no-op tracker placed in java.base
# (package orca, exported to every module). With verification forced:
#  1. LoadAll links every class of every module (verifies it);
#  2. javac (itself rewritten) compiles the test sources: output identical;
#  3. Demo runs with identical output.
#  4. if the JDK has lib/src.zip: the rewritten javac compiles java.base's
#     java/util sources (several hundred files); output identical.
# usage: [JAVA_HOME=...] rewriter/tests/jvm/patched_jdk.sh   (after cargo build --release)
# (a JDK without jmods/ is read with `jimage extract`)
set -eu
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
RW=$ROOT/target/release/orca-rewrite
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
W=${WORK:-/tmp/orca-patched}
rm -rf "$W"; mkdir -p "$W/patch" "$W/tsrc/orca" "$W/bin"
# no-op tracker (the agent binds the real natives; here the native becomes an empty Java method)
sed 's/private static native void event(int kind, Object subject);/private static void event(int kind, Object subject) {}/' \
  "$ROOT/java-tracker/orca/OrcaProfilerTracker.java" > "$W/tsrc/orca/OrcaProfilerTracker.java"
"$JAVA_HOME/bin/javac" --release 8 -nowarn -d "$W/trk" "$W/tsrc/orca/OrcaProfilerTracker.java"
mods=""
if [ -d "$JAVA_HOME/jmods" ]; then
  for j in "$JAVA_HOME"/jmods/*.jmod; do
    m=$(basename "$j" .jmod)
    "$RW" "$j" -o "$W/patch/$m" | head -1 >> "$W/rewrite.log"
    mods="$mods $m"
  done
else
  "$JAVA_HOME/bin/jimage" extract --dir "$W/image" "$JAVA_HOME/lib/modules"
  for d in "$W"/image/*; do
    m=$(basename "$d")
    "$RW" "$d" -o "$W/patch/$m" | head -1 >> "$W/rewrite.log"
    mods="$mods $m"
  done
  rm -rf "$W/image"
fi
rm -f "$W"/patch/*/module-info.class
awk '{c+=$2; m+=substr($5,2); u+=$7; s+=$9} END{print "rewritten JDK: changed=" c " methods=" m " unchanged=" u " skipped=" s}' FS='[ :]+' "$W/rewrite.log"
mkdir -p "$W/patch/java.base/orca" && cp "$W/trk/orca/OrcaProfilerTracker.class" "$W/patch/java.base/orca/"
targets=$(echo $mods | tr ' ' ','),ALL-UNNAMED
{
  echo "-Xshare:off -Xverify:all -XX:+UnlockDiagnosticVMOptions -XX:+BytecodeVerificationLocal -XX:+BytecodeVerificationRemote"
  for m in $mods; do echo "--patch-module $m=$W/patch/$m"; done
  echo "--add-modules ALL-SYSTEM --add-exports java.base/orca=$targets"
} > "$W/patch.args"
"$JAVA_HOME/bin/javac" -d "$W/bin" "$ROOT/rewriter/tests/jvm/LoadAll.java" "$ROOT/rewriter/tests/jvm/Demo.java"
echo "== 1. link every class of the rewritten JDK (verification forced)"
"$JAVA_HOME/bin/java" @"$W/patch.args" -cp "$W/bin" LoadAll "$W/patch" | tail -5
echo "== 2. rewritten javac compiles the test sources; class files identical"
mkdir -p "$W/c1" "$W/c2"
SRC="$ROOT/rewriter/tests/jvm/Demo.java $ROOT/rewriter/tests/jvm/LoadAll.java $ROOT/rewriter/tests/jvm/VerifyHarness.java $ROOT/rewriter/benches/asm/AsmBench.java"
"$JAVA_HOME/bin/javac" -cp /usr/share/java/asm.jar -d "$W/c1" $SRC
"$JAVA_HOME/bin/java" @"$W/patch.args" -m jdk.compiler/com.sun.tools.javac.Main -cp /usr/share/java/asm.jar -d "$W/c2" $SRC
diff -r "$W/c1" "$W/c2" && echo "javac output identical ($(ls "$W/c1" | wc -l) class files)"
echo "== 3. Demo on the rewritten JDK"
"$JAVA_HOME/bin/java" -cp "$W/bin" Demo > "$W/d1.txt" 2>/dev/null
"$JAVA_HOME/bin/java" @"$W/patch.args" -cp "$W/bin" Demo > "$W/d2.txt" 2>/dev/null
diff "$W/d1.txt" "$W/d2.txt" && echo "Demo output identical"
if [ -r "$JAVA_HOME/lib/src.zip" ]; then
  echo "== 4. rewritten javac compiles java.base java/util sources"
  mkdir -p "$W/src" "$W/s1" "$W/s2"
  (cd "$W/src" && unzip -q "$JAVA_HOME/lib/src.zip" 'java.base/java/util/*')
  find "$W/src" -name '*.java' > "$W/srcs.txt"
  "$JAVA_HOME/bin/javac" -nowarn -XDignore.symbol.file --patch-module java.base="$W/src/java.base" -d "$W/s1" @"$W/srcs.txt" 2>/dev/null || true
  "$JAVA_HOME/bin/java" @"$W/patch.args" -m jdk.compiler/com.sun.tools.javac.Main -nowarn -XDignore.symbol.file --patch-module java.base="$W/src/java.base" -d "$W/s2" @"$W/srcs.txt" 2>/dev/null || true
  n=$(find "$W/s1" -name '*.class' | wc -l)
  diff -r "$W/s1" "$W/s2" && echo "javac output identical: $(wc -l < "$W/srcs.txt") source files, $n class files"
fi
