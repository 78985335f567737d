#!/usr/bin/env bash
# Measures JCSP net2 between two OS programs on 127.0.0.1 (see README.md here).
#   run.sh JCSP_SOURCE_DIR [writer options: --warmup S --rounds N --round S --only sync|stream --filter raw|object]
# JCSP_SOURCE_DIR is a JCSP checkout (the folder holding src/main/java/jcsp). Nothing is downloaded.
# JAVA_OPTS is passed to both programs; BUILD_DIR (default: a fresh temporary folder) holds the classes.
set -euo pipefail

if [[ $# -lt 1 || ! -d "$1/src/main/java/jcsp/net2" ]]; then
    echo "usage: $0 JCSP_SOURCE_DIR [--warmup S] [--rounds N] [--round S] [--only sync|stream] [--filter raw|object]" >&2
    echo "JCSP_SOURCE_DIR must hold src/main/java/jcsp/net2 (a checkout of github.com/CSPforJAVA/jcsp)." >&2
    exit 2
fi

jcsp_src=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$(mktemp -d)}
filter=raw
for ((i = 1; i <= $#; i++)); do
    if [[ ${!i} == --filter ]]; then j=$((i + 1)); filter=${!j}; fi
done

mkdir -p "$build/jcsp" "$build/harness"
echo "Compiling JCSP net2 from $jcsp_src into $build/jcsp" >&2
javac -nowarn -encoding UTF-8 -d "$build/jcsp" -sourcepath "$jcsp_src/src/main/java" \
    $(find "$jcsp_src/src/main/java/jcsp/net2" -name '*.java') 2> >(grep -v '^Note:' >&2)
javac -encoding UTF-8 -cp "$build/jcsp" -d "$build/harness" "$here/NetPingPong.java"
classpath="$build/jcsp:$build/harness"

reader_out="$build/reader.out"
# shellcheck disable=SC2086 # JAVA_OPTS is a list of options
java ${JAVA_OPTS:-} -cp "$classpath" NetPingPong reader --filter "$filter" > "$reader_out" 2>&1 &
reader=$!
trap 'kill "$reader" 2>/dev/null || true' EXIT

port=
for _ in $(seq 1 600); do
    port=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$reader_out")
    [[ -n $port ]] && break
    kill -0 "$reader" 2>/dev/null || { cat "$reader_out" >&2; echo "The reader ended before it was ready." >&2; exit 1; }
    sleep 0.1
done
[[ -n $port ]] || { echo "The reader was not ready within 60 s." >&2; exit 1; }

echo "load before: $(cat /proc/loadavg)"
# shellcheck disable=SC2086
java ${JAVA_OPTS:-} -cp "$classpath" NetPingPong writer "$port" "$@"
echo "load after: $(cat /proc/loadavg)"
