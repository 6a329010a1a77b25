#!/bin/sh
# `make reproduce`: every config in full (`safeclf run CONFIG --check`), then every
# benchmarks/reproduce_*.py, each with its output as it runs; at the end one table (what ran,
# expectations met, wall time) printed and written to benchmarks/results/reproduce-<UTC>.md.
# Exit 1 when any config or script missed an expectation or failed.
BIN=${BIN:-.venv/bin}
mkdir -p benchmarks/results
table="benchmarks/results/reproduce-$(date -u +%Y%m%d-%H%M%S).md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=""
start=$(date +%s)
duration() { printf '%dm %02ds' $(($1 / 60)) $(($1 % 60)); }
for f in configs/*.yaml benchmarks/reproduce_*.py; do
  [ -e "$f" ] || continue
  t0=$(date +%s)
  case $f in
    *.yaml) echo "== safeclf run $f --check"
            { "$BIN/safeclf" run "$f" --check; echo $? > "$tmp/rc"; } 2>&1 | tee "$tmp/log" ;;
    *)      echo "== $f"
            { "$BIN/python" "$f"; echo $? > "$tmp/rc"; } 2>&1 | tee "$tmp/log" ;;
  esac
  rc=$(cat "$tmp/rc")
  # the runner's own count ("expectations met: 7/7"); a script without one: its exit code
  met=$(grep -o 'expectations met: [0-9]*/[0-9]*' "$tmp/log" | tail -n 1 | sed 's/.*: //')
  if [ "$rc" -ne 0 ]; then
    fail="$fail $f"
    met="${met:+$met, }FAILED (exit $rc)"
  else
    met=${met:-passed}
  fi
  echo "| $f | $met | $(duration $(($(date +%s) - t0))) |" >> "$tmp/rows"
done
{
  echo "# make reproduce, $(date -u '+%Y-%m-%d %H:%M') UTC"
  echo
  echo "$(nproc) cores, git $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
  echo
  echo "| run | expectations met | time |"
  echo "|---|---|---|"
  cat "$tmp/rows"
  echo "| **total** | $([ -z "$fail" ] && echo 'all' || echo "not met:$fail") | $(duration $(($(date +%s) - start))) |"
} > "$table"
echo
cat "$table"
echo "(written to $table)"
[ -z "$fail" ]
