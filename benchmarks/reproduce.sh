#!/bin/sh
# `make reproduce`: every config in full (`safeclf run CONFIG --check`), then every
# benchmarks/reproduce_*.py, each with its output as it runs; at the end one table (what ran,
# expectations met, wall time) printed and written to benchmarks/results/reproduce-<UTC>.md.
# The expectations are counted by where their reference comes from (the runner's and the
# scripts' "by source:" line): the papers' and the report's figures and claims (paper, figure,
# report) apart from our own choices (project) and checks true by construction (invariant).
# The papers' figures a config draws (plots named goh_*, carlevaro_*, bental_*, ruf_*,
# agarwal_*) are copied as PNGs into benchmarks/results/figures/ (docs/img holds the copies the
# method pages show).
# It resumes: each item's run folder lives in runs/reproduce-<commit>/<item>/, and an item
# that finished at this commit is not run again, so an interrupted `make reproduce` (the whole
# takes longer than one sitting on 2 cores) goes on where it stopped when started again on the
# same commit (`safeclf run --resume` for an item stopped half-way); the table says which
# items an earlier sitting ran. A new commit starts afresh.
# The record then lists every cited figure (paper, figure, report) beside ours, with its
# tolerance, source and verdict (benchmarks/_reproduce_record.py).
# Exit 1 when any config or script missed an expectation or failed.
BIN=${BIN:-.venv/bin}
mkdir -p benchmarks/results
table="benchmarks/results/reproduce-$(date -u +%Y%m%d-%H%M%S).md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=""
start=$(date +%s)
duration() { printf '%dm %02ds' $(($1 / 60)) $(($1 % 60)); }
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# a changed tree never resumes a clean one (the figures this script copies do not count)
git diff --quiet HEAD -- . ':(exclude)benchmarks/results' 2>/dev/null || commit="$commit-dirty"
state="runs/reproduce-$commit"
mkdir -p "$state"
for f in configs/*.yaml benchmarks/reproduce_*.py; do
  [ -e "$f" ] || continue
  t0=$(date +%s)
  item=$(basename "$f"); item=${item%.*}
  dir="$state/$item"
  earlier=""
  if [ -f "$dir/done" ]; then  # finished at this commit in an earlier sitting
    echo "== $f: finished at $commit in an earlier sitting ($dir)"
    cp "$dir/log" "$tmp/log"; cp "$dir/done" "$tmp/rc"
    earlier=" (earlier sitting)"; t0=$(($(date +%s) - $(cat "$dir/seconds")))
  else
    mkdir -p "$dir"
    prev=$(ls -d "$dir"/2*/ 2>/dev/null | tail -n 1)
    if [ -n "$prev" ]; then  # stopped half-way: its remaining jobs
      echo "== safeclf run --resume $prev --check"
      { "$BIN/safeclf" run --resume "$prev" --check; echo $? > "$tmp/rc"; } 2>&1 | tee "$tmp/log"
    else
      case $f in
        *.yaml) echo "== safeclf run $f --check"
                { "$BIN/safeclf" run "$f" --check --out "$dir"; echo $? > "$tmp/rc"; } 2>&1 | tee "$tmp/log" ;;
        *)      echo "== $f"
                { SAFECLF_REPRODUCE_OUT="$dir" "$BIN/python" "$f"; echo $? > "$tmp/rc"; } 2>&1 | tee "$tmp/log" ;;
      esac
    fi
    cp "$tmp/log" "$dir/log"; echo $(($(date +%s) - t0)) > "$dir/seconds"; cp "$tmp/rc" "$dir/done"
  fi
  rc=$(cat "$tmp/rc")
  folder=$(grep -o 'run folder: .*' "$tmp/log" | tail -n 1 | sed 's/run folder: //')
  if [ -n "$folder" ] && [ -d "$folder/plots" ]; then
    for png in "$folder"/plots/*.png; do
      case $(basename "$png") in
        goh_*|carlevaro_*|bental_*|ruf_*|agarwal_*)
          mkdir -p benchmarks/results/figures && cp "$png" benchmarks/results/figures/ ;;
      esac
    done
  fi
  # the runner's own count ("expectations met: 7/7"); a script without one: its exit code
  met=$(grep -o 'expectations met: [0-9]*/[0-9]*' "$tmp/log" | tail -n 1 | sed 's/.*: //')
  # "by source: paper 3/3 · figure 1/1 · report 0/0 · project 2/2 · invariant 192/192" ->
  # "4/4 | 2/2 | 192/192" (paper + figure + report, project, invariant); "–" without one
  bysrc=$(grep -o 'by source: .*' "$tmp/log" | tail -n 1 | awk '
    { for (i = 3; i < NF; i++) if ($(i + 1) ~ /^[0-9]+[/][0-9]+$/) {
        split($(i + 1), f, "/"); m[$i] = f[1]; n[$i] = f[2] } }
    END { if (!NR) { print "– | – | –"; exit }
          printf "%d/%d | %d/%d | %d/%d\n", m["paper"] + m["figure"] + m["report"],
                 n["paper"] + n["figure"] + n["report"], m["project"], n["project"],
                 m["invariant"], n["invariant"] }')
  if [ "$rc" -ne 0 ]; then
    fail="$fail $f"
    met="${met:+$met, }FAILED (exit $rc)"
  else
    met=${met:-passed}
  fi
  echo "| $f | $met | $bysrc | $(duration $(($(date +%s) - t0)))$earlier |" >> "$tmp/rows"
done
{
  echo "# make reproduce, $(date -u '+%Y-%m-%d %H:%M') UTC"
  echo
  echo "$(nproc) cores, git $commit, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null); run folders in $state"
  echo
  echo "Expectations by source: *cited* = the papers' and the proset report's figures and claims"
  echo "(paper, figure read off a plot, report), *project* = our own measurement or design choice,"
  echo "*invariant* = true by construction (a solver or implementation check)."
  echo
  echo "| run | expectations met | cited | project | invariant | time |"
  echo "|---|---|---|---|---|---|"
  cat "$tmp/rows"
  echo "| **total** | $([ -z "$fail" ] && echo 'all' || echo "not met:$fail") | $(awk -F' [|] ' '
    { for (k = 3; k <= 5; k++) { split($k, f, "/"); m[k] += f[1]; n[k] += f[2] } }
    END { printf "%d/%d | %d/%d | %d/%d", m[3], n[3], m[4], n[4], m[5], n[5] }' "$tmp/rows") | $(duration $(($(date +%s) - start))) |"
} > "$table"
# every cited figure beside ours, from the items' run folders
"$BIN/python" benchmarks/_reproduce_record.py "$state" >> "$table"
echo
cat "$table"
echo "(written to $table)"
[ -z "$fail" ]
