#!/bin/sh
# `make check-configs`: every config's CI profile, `safeclf run CONFIG --profile ci --check`,
# one worker each and as many configs at a time as the machine has cores: a run's own start,
# reading back and report leave its workers idle, and starting workers costs each run a few
# seconds of imports (on 2 cores: 3 min 35 s against 5 min 17 s one config after another on two
# workers). In reverse name order, so that the longest profile (robust_socp, about 2 min on one
# core) starts first rather than last, when it would leave the other core idle to the end.
# Each config's output is printed whole, under its own heading, as it finishes; the count at
# the end. Exit 1 when any config did not pass.
BIN=${BIN:-.venv/bin}
OUT=${OUT:-runs/ci}
if [ "$1" = --one ]; then  # one config (this script calls itself so): $2 the config, $3 a folder
  n=$(basename "$2" .yaml); t0=$(date +%s)
  "$BIN/safeclf" run "$2" --profile ci --check -j 1 --out "$OUT" >"$3/$n.log" 2>&1
  echo $? >"$3/$n.rc"
  # the lock keeps two configs that finish together from interleaving their lines
  flock "$3/lock" sh -c 'echo "== safeclf run $1 --profile ci --check ($2 s)"; cat "$3"' \
    _ "$2" "$(($(date +%s) - t0))" "$3/$n.log"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$OUT"
ls -r configs/*.yaml | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} sh "$0" --one {} "$tmp"
pass=0; fail=0
for f in configs/*.yaml; do
  if [ "$(cat "$tmp/$(basename "$f" .yaml).rc" 2>/dev/null)" = 0 ]; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "!! $f did not pass"; fi
done
echo "configs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
