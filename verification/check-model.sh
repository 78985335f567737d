#!/usr/bin/env bash
# Model-checks verification/channel.pml with spin: every configuration below must verify (no
# assertion violated, no invalid end state, the state space searched to the end). Exits non-zero
# on any error. Each run is an exhaustive search; all of them take some seconds.
#
#   verification/check-model.sh                 the configurations CI checks (the corrected protocol)
#   verification/check-model.sh --counterexamples
#                                               the protocol before each correction: each must
#                                               FAIL; prints the counterexample's trail
#   N=4 CAP=2 verification/check-model.sh       larger bounds (more values, a larger buffer)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here/channel.pml" "$work/"
cd "$work" || exit 2

command -v spin >/dev/null || { echo "spin is not installed (Debian: apt-get install -y spin)" >&2; exit 2; }
command -v gcc >/dev/null || { echo "gcc is not installed" >&2; exit 2; }

# N and CAP from the environment replace each configuration's own (the model's defaults: 3 and 1).
bounds() { # flags -> flags with the environment's bounds
  local flags="$1"
  if [ -n "${N:-}" ]; then flags="$(sed -E 's/-DN=[0-9]+//' <<<"$flags") -DN=$N"; fi
  if [ -n "${CAP:-}" ]; then flags="$(sed -E 's/-DCAP=[0-9]+//' <<<"$flags") -DCAP=$CAP"; fi
  echo "$flags"
}

# name|flags. FIXED: the corrected hand-over (a put reaches a parked reader directly only while
# nothing is buffered). HOLD_BACK: the corrected hold (nothing behind a held buffered value is
# handed out until the hold settles).
verified=(
  "rendezvous, plain parties|-DCAP=0 -DFIXED"
  "rendezvous, both select, timeouts, poison|-DCAP=0 -DRSEL -DWSEL -DTIMERS -DPOISON -DFIXED"
  "buffered, plain parties, poison|-DFIXED -DPOISON"
  "buffered, selecting reader|-DRSEL -DFIXED"
  "buffered, selecting writer|-DWSEL -DFIXED"
  "buffered, both select|-DRSEL -DWSEL -DFIXED"
  "buffered, both select, timeouts|-DRSEL -DWSEL -DTIMERS -DFIXED"
  "buffered, both select, timeouts, poison|-DRSEL -DWSEL -DTIMERS -DPOISON -DFIXED"
  "buffered 2, both select|-DCAP=2 -DRSEL -DWSEL -DFIXED"
  "hold beside a plain reader, poison at the end|-DHOLD -DPOISON -DPOISON_LATE -DFIXED -DHOLD_BACK -DHOLD_ORDER"
  "hold beside a selecting reader, poison at the end|-DHOLD -DRSEL -DPOISON -DPOISON_LATE -DFIXED -DHOLD_BACK -DHOLD_ORDER"
  "hold beside a selecting reader and writer, poison at the end|-DHOLD -DRSEL -DWSEL -DPOISON -DPOISON_LATE -DFIXED -DHOLD_BACK -DHOLD_ORDER"
  "hold beside a selecting reader, poison at any time|-DHOLD -DRSEL -DPOISON -DFIXED -DHOLD_BACK -DHOLD_ORDER"
  "hold, buffered 2, selecting reader, poison at any time|-DCAP=2 -DHOLD -DRSEL -DPOISON -DFIXED -DHOLD_BACK -DHOLD_ORDER"
  "reservations, both select|-DN=2 -DCAP=2 -DRESERVE -DRSEL -DWSEL -DFIXED"
  "reservations, selecting reader, poison|-DN=2 -DCAP=2 -DRESERVE -DRSEL -DPOISON -DFIXED"
)
# Must fail: they show defects (docs/ARCHITECTURE.md, "The protocol model").
counterexamples=(
  "today's hand-over: both select on a buffer|-DRSEL -DWSEL"
  "today's hand-over: reservations and a selecting reader|-DCAP=2 -DRESERVE -DRSEL -DWSEL"
  "a released hold reorders a reader's values|-DHOLD -DRSEL -DPOISON -DPOISON_LATE -DFIXED -DHOLD_ORDER"
)

run() { # flags -> prints pan's summary; returns 0 if verified
  local flags
  flags="$(bounds "$1")"
  rm -f pan pan.* ./*.trail
  # shellcheck disable=SC2086
  spin -a $flags channel.pml >spin.log 2>&1 || { cat spin.log; return 2; }
  gcc -O1 -DSAFETY -DVECTORSZ=4096 -o pan pan.c 2>gcc.log || { cat gcc.log; return 2; }
  ./pan -m1000000 >pan.log 2>&1
  local states errors
  states=$(sed -nE 's/^ *([0-9e.+]+) states, stored.*/\1/p' pan.log | head -1)
  errors=$(sed -nE 's/.*errors: ([0-9]+).*/\1/p' pan.log | head -1)
  echo "${states:-?} states, ${errors:-?} errors"
  grep -q "depth too small\|max search depth too small" pan.log && { echo "  search depth exceeded"; return 1; }
  [ "${errors:-1}" = "0" ]
}

failed=0
if [ "${1:-}" = "--counterexamples" ]; then
  for entry in "${counterexamples[@]}"; do
    name="${entry%%|*}"; flags="${entry#*|}"
    if summary=$(run "$flags"); then
      echo "UNEXPECTED PASS  $name: $summary"; failed=$((failed + 1))
    else
      echo "counterexample   $name: $summary"
      grep -E "assertion violated|invalid end state" pan.log | head -2 | sed 's/^/    /'
      # shellcheck disable=SC2086
      spin -t -p $(bounds "$flags") channel.pml 2>/dev/null | grep -E "^ *[0-9]+:" | tail -12 | sed 's/^/    /'
    fi
  done
  exit $((failed > 0))
fi

for entry in "${verified[@]}"; do
  name="${entry%%|*}"; flags="${entry#*|}"
  if summary=$(run "$flags"); then
    echo "verified  $name: $summary"
  else
    echo "FAILED    $name: $summary"
    grep -E "assertion violated|invalid end state|error" pan.log | head -3 | sed 's/^/    /'
    failed=$((failed + 1))
  fi
done
echo "${#verified[@]} configurations, $failed failed"
[ "$failed" -eq 0 ]
