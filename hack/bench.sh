#!/usr/bin/env bash
# bench.sh runs fabricmap's Go benchmarks and prints each measured figure next to its target as a ratio (1.00
# or below meets it) with "met" or "NOT MET", then a verdict line; it exits 1 when a target is missed (a
# benchmark that fails or gives no figure misses its targets). Benchmarks, not timed tests, check speed and
# memory; this judges their figures.
#
#   hack/bench.sh            the benchmarks of `make bench` (placement's are hack/bench-placement.sh)
#   hack/bench.sh scale      only the convergence bench at NODES nodes (50000 unless set): `make bench-scale`
#   hack/bench.sh verdict    only the verdict line over BENCH_RESULTS
#   hack/bench.sh judge FILE judge the convergence figures of a saved `go test -bench` output (a bench-scale run's)
#
# BENCH_RESULTS=FILE adds every judged figure to FILE, a line each ("met", "NOT MET", "LOST", "TRADE-OFF" or
# "NOT RUN", a tab, the figure's name); BENCH_VERDICT=0 leaves the verdict line and the exit status to a
# later `hack/bench.sh verdict` over the same FILE (`make bench` judges this script's figures and
# bench-placement.sh's together so).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
own_results=
if [ -z "${BENCH_RESULTS:-}" ]; then
  BENCH_RESULTS=$(mktemp)
  own_results=$BENCH_RESULTS
fi
trap 'rm -f "$out" $own_results' EXIT

# record STATUS NAME: one judged figure.
record() { printf '%s\t%s\n' "$1" "$2" >>"$BENCH_RESULTS"; }

# verdict: the verdict line over BENCH_RESULTS; fails when a target was missed, and when nothing was judged.
verdict() {
  awk -F '\t' '
    $1 == "met" { n++ }
    $1 == "NOT MET" { n++; missed[++m] = $2 }
    $1 == "LOST" { lost[++l] = $2 }
    $1 == "TRADE-OFF" { traded[++t] = $2 }
    $1 == "NOT RUN" { notrun[++r] = $2 }
    # list A K: the K items of A, "; " between them.
    function list(a, k,    s, i) { for (i = 1; i <= k; i++) s = s (i > 1 ? "; " : "") a[i]; return s }
    END {
      if (!n) { printf "bench: no figure was judged (an empty result file, or every benchmark failed to run)\n"; exit 1 }
      if (m) printf "bench: %d of %d targets missed: %s", m, n, list(missed, m)
      else printf "bench: all %d targets met", n
      if (l > 3) printf "; %d peer comparisons lost (no target; see the tables)", l
      else if (l) printf "; %d peer comparison%s lost (no target): %s", l, (l > 1 ? "s" : ""), list(lost, l)
      if (t) printf "; %d accepted trade-off%s lost: %s", t, (t > 1 ? "s" : ""), list(traded, t)
      if (r) printf "; not run: %s", list(notrun, r)
      printf "\n"
      exit (m > 0)
    }' "$BENCH_RESULTS"
}

if [ "${1:-}" = verdict ]; then
  verdict
  exit
fi

# gotest ARGS: go test ARGS, its output kept in $out; a failing run is a missed target, and the rest still run.
gotest() {
  if ! go test "$@" 2>&1 | tee -a "$out"; then
    record "NOT MET" "go test $* failed"
  fi
}

# mean BENCH UNIT: the mean of the benchmark's UNIT column over its runs; nothing when it has none.
mean() {
  awk -v bench="$1" -v unit="$2" '
    $1 ~ "^"bench"(-[0-9]+)?$" { for (i = 3; i < NF; i++) if ($(i+1) == unit) { sum += $i; n++ } }
    END { if (n) printf "%.6g\n", sum / n }' "$out"
}

# judge NAME VALUE UNIT TARGET [NOTE]: prints the figure, its target and ratio (a target of 0 must be met
# exactly), met or NOT MET and the note, and records it. No VALUE: its benchmark gave no figure, a target
# missed. No TARGET: the figure is printed, not judged.
judge() {
  local name=$1 value=$2 unit=$3 target=${4:-} note=${5:-}
  if [ -z "$value" ]; then
    printf '%-44s %12s %-14s %s\n' "$name" "—" "$unit" "NOT MET: no figure"
    record "NOT MET" "$name (no figure)"
    return
  fi
  if [ -z "$target" ]; then
    printf '%-44s %12.2f %-14s %s\n' "$name" "$value" "$unit" "(no target)"
    return
  fi
  local status
  status=$(awk -v v="$value" -v t="$target" 'BEGIN { print (v <= t ? "met" : "NOT MET") }')
  awk -v name="$name" -v v="$value" -v unit="$unit" -v t="$target" -v s="$status${note:+ $note}" 'BEGIN {
    if (t == 0) printf "%-44s %12.2f %-14s target %11.10g              %s\n", name, v, unit, t, s
    else printf "%-44s %12.2f %-14s target %11.10g  ratio %5.2f  %s\n", name, v, unit, t, v / t, s }'
  record "$status" "$name"
}

# judge_targeted NAME VALUE UNIT TARGET: judge, for a figure that must have a target: no TARGET (a size the
# benchmark has no target for) is a target missed, never a figure that goes unjudged.
judge_targeted() {
  if [ -z "${4:-}" ]; then
    printf '%-44s %12s %-14s %s\n' "$1" "${2:-—}" "$3" "NOT MET: no target for this size"
    record "NOT MET" "$1 (no target for this size)"
    return
  fi
  judge "$@"
}

# converge BENCH LABEL: judges the figures of a convergence benchmark (test/e2e, convergeBench) against the
# targets it reports for its size; a size without targets fails, and so does any figure missing.
converge() {
  local b=$1 l=$2
  judge_targeted "$l: cold convergence" "$(mean "$b" cold-converge-s)" s "$(mean "$b" cold-target-s)"
  judge "$l: writes beyond one per object" "$(mean "$b" writes-beyond-one)" writes 0
  judge "$l: writes in steady state" "$(mean "$b" steady-writes)" writes 0
  judge_targeted "$l: 1 % of nodes moved, convergence" "$(mean "$b" moved-converge-s)" s "$(mean "$b" moved-target-s)"
  judge_targeted "$l: aggregator peak RSS" "$(mean "$b" peak-RSS-MiB)" MiB "$(mean "$b" RSS-target-MiB)"
  # The heartbeat load must be what the agents send: a generator more than 5 % behind measured a lighter load.
  local hb target short=
  hb=$(mean "$b" heartbeats-per-s)
  target=$(mean "$b" heartbeats-target-per-s)
  if [ -n "$hb" ] && [ -n "$target" ]; then
    short=$(awk -v a="$hb" -v t="$target" 'BEGIN { s = t > 0 ? (t - a) / t * 100 : 100; printf "%.6g", s < 0 ? 0 : s }')
  fi
  judge "$l: heartbeats/s during cold convergence" "$hb" /s
  judge "$l: heartbeats short of the agents' rate" "$short" % 5
  judge "$l: labels fabricmap writes per node" "$(mean "$b" node-labels-per-node)" labels
  judge "$l: kube-apiserver peak RSS" "$(mean "$b" apiserver-peak-RSS-MiB)" MiB
  judge "$l: etcd peak RSS" "$(mean "$b" etcd-peak-RSS-MiB)" MiB
}

# The convergence benches need root (test/e2e's other tests need network namespaces); E2E_SCALE=0 skips the
# 10k one of `make bench`.
e2e_why_not=
if [ "$(id -u)" != 0 ]; then
  e2e_why_not="test/e2e needs root"
fi

if [ "${1:-}" = judge ]; then
  [ -r "${2:-}" ] || { echo "bench: judge FILE: no readable FILE given" >&2; exit 2; }
  cp "$2" "$out"
  echo "== measured / target =="
  converge BenchmarkConvergeScale "$(mean BenchmarkConvergeScale nodes | awk '{ printf "%d", $1 }') nodes"
  [ "${BENCH_VERDICT:-1}" = 0 ] || verdict
  exit
fi

if [ "${1:-}" = scale ]; then
  nodes=${NODES:-50000}
  if [ -n "$e2e_why_not" ]; then
    echo "bench-scale: $e2e_why_not" >&2
    exit 1
  fi
  FABRICMAP_BENCH_NODES=$nodes gotest -run '^$' -bench '^BenchmarkConvergeScale$' -benchtime 1x -count 1 -timeout 180m ./test/e2e/
  echo
  echo "== measured / target =="
  converge BenchmarkConvergeScale "$(mean BenchmarkConvergeScale nodes | awk '{ printf "%d", $1 }') nodes"
  [ "${BENCH_VERDICT:-1}" = 0 ] || verdict
  exit
fi

gotest -run '^$' -bench . -benchtime "${BENCHTIME:-50x}" -count 1 ./test/footprint/
# The merge at 10,016 and 50,016 reports: its CPU per pass must grow no faster than the reports (linear); and
# the aggregator's pure work on the pass after 1 % of 50,016 nodes moved (evidence, tree, kept names, HyperNodes,
# labels).
gotest -run '^$' -bench 'Merge(10|50)k|Rebuild50k' -benchtime "${SCALE_BENCHTIME:-5x}" -count 1 ./topology/
gotest -run '^$' -bench Assess10k -benchtime "${SCALE_BENCHTIME:-5x}" -count 1 ./health/
# ibnetdiscover captures of 15,000 hosts (1.1 million lines) and 50,016 (3.6 million): to a tree, and one agent's
# probe run on the 15k one.
gotest -p 1 -run '^$' -bench 'CaptureToTree|ProbeFabric' -benchtime "${SCALE_BENCHTIME:-5x}" -count 1 \
  ./sources/ibfabric/ ./discovery/ibnetdiscover/
# A 100 MB UFM ports answer, read over 127.0.0.1 through the aggregator's client (decoded as a stream).
gotest -run '^$' -bench HugePorts -benchtime 3x -count 1 ./sources/ufm/
# Hostile UFM answers of 32 MB and 200 MB (a million entries, a huge string or list, deep nesting), same path.
gotest -run '^$' -bench HostileAnswers -benchtime 1x -count 1 ./sources/ufm/
# Hostile ibnetdiscover captures, gzipped as a ConfigMap holds them (65,000-byte descriptions, a 1 GiB gzip
# bomb, many records up to the limits), through the aggregator's capture reader.
gotest -run '^$' -bench HostileCaptures -benchtime 1x -count 1 ./sources/ibfabric/
# Hostile cloud answers (a 500 MB page, a page or an ID just under the body cap), through each SDK's capped client.
gotest -run '^$' -bench HostileCloudAnswers -benchtime 1x -count 1 ./sources/aws/ ./sources/gcp/ ./sources/oci/
# The whole system at 10,016 nodes (real API server, aggregator binary; about 3 minutes).
if [ "${E2E_SCALE:-1}" = 0 ]; then
  e2e_why_not="E2E_SCALE=0"
fi
if [ -z "$e2e_why_not" ]; then
  gotest -run '^$' -bench '^BenchmarkConverge10k$' -benchtime 1x -count 1 -timeout 30m ./test/e2e/
fi

# ratio NAME BENCH UNIT TARGET: the mean of the benchmark's UNIT column, judged against the target.
ratio() { judge "$1" "$(mean "$2" "$3")" "$3" "$4"; }
echo
echo "== measured / target =="
ratio "agent probe cycle, CPU (in-process)" BenchmarkProbeCycle cpu-ms/cycle 50
ratio "agent binary, CPU per cycle" BenchmarkAgentBinary cpu-ms/cycle 50
ratio "agent binary, peak RSS" BenchmarkAgentBinary peak-RSS-MiB 30
# The machine's charge for a timer wake-up (see BenchmarkWakeBaseline), and the agent's figure net of it.
ratio "wake-up baseline, CPU per cycle" BenchmarkWakeBaseline cpu-ms/cycle 50
agent=$(mean BenchmarkAgentBinary cpu-ms/cycle)
wake=$(mean BenchmarkWakeBaseline cpu-ms/cycle)
net=
if [ -n "$agent" ] && [ -n "$wake" ]; then
  net=$(awk -v a="$agent" -v w="$wake" 'BEGIN { printf "%.6g", a - w }')
fi
judge "agent binary, CPU net of baseline" "$net" cpu-ms/cycle 50
ratio "merge 10k reports, wall" BenchmarkMerge10kReports ns/op 2000000000
ratio "merge 10k reports, peak heap" BenchmarkMerge10kReports peak-heap-MiB 1024
# Linear merge: 50,016 reports cost at most 5.5 times the CPU of 10,016 (5 times as many, with some room).
m10=$(mean BenchmarkMerge10kReports cpu-ms/op)
m50=$(mean BenchmarkMerge50kReports cpu-ms/op)
growth=
if [ -n "$m10" ] && [ -n "$m50" ]; then
  growth=$(awk -v a="$m10" -v b="$m50" 'BEGIN { if (a > 0) printf "%.6g", b / a }')
fi
judge "merge 50k / 10k reports, CPU per pass" "$growth" times 5.5
judge "merge 50k reports, CPU per pass" "$m50" cpu-ms/op
# Its share of the 10 s that 1 % of 50,016 nodes moving may take: at most 1 s of CPU.
ratio "rebuild 50k after 1 % moved, CPU (pure work)" BenchmarkRebuild50kMoved cpu-ms/op 1000
ratio "merge and fabric health 10k nodes, wall" BenchmarkAssess10k ns/op 2000000000
ratio "IB capture 15k hosts to tree, wall" BenchmarkCaptureToTree/15k ns/op 5000000000
ratio "IB capture 50k hosts to tree, wall" BenchmarkCaptureToTree/50k ns/op 15000000000
ratio "IB capture 50k hosts to tree, peak heap" BenchmarkCaptureToTree/50k peak-heap-MiB 512
ratio "IB probe 15k hosts, peak heap" BenchmarkProbeFabric/15k/file peak-heap-MiB 16
ratio "IB probe 15k hosts (tool), heap" BenchmarkProbeFabric/15k/tool peak-heap-MiB 16
ratio "UFM 100 MB answer, peak heap" BenchmarkDecodeHugePortsAnswer peak-heap-MiB 300
# The worst of the hostile answers, not their mean: each must stay within the target.
worst=$(awk '$1 ~ /^BenchmarkHostileAnswers\// { for (i = 3; i < NF; i++) if ($(i+1) == "peak-MiB" && $i > v) { v = $i; w = $1 } }
             END { if (w != "") print v, w }' "$out")
judge "UFM hostile answer, worst peak heap" "${worst%% *}" peak-MiB 256 "${worst:+(${worst#* })}"
worst=$(awk '$1 ~ /^BenchmarkHostileCaptures\// { for (i = 3; i < NF; i++) if ($(i+1) == "peak-heap-MiB" && $i > v) { v = $i; w = $1 } }
             END { if (w != "") print v, w }' "$out")
judge "IB hostile capture, worst peak heap" "${worst%% *}" peak-heap-MiB 256 "${worst:+(${worst#* })}"
worst=$(awk '$1 ~ /^BenchmarkHostileCloudAnswers\// { for (i = 3; i < NF; i++) if ($(i+1) == "peak-heap-MiB" && $i > v) { v = $i; w = $1 } }
             END { if (w != "") print v, w }' "$out")
judge "cloud hostile answer, worst peak heap" "${worst%% *}" peak-heap-MiB 256 "${worst:+(${worst#* })}"
if [ -z "$e2e_why_not" ]; then
  converge BenchmarkConverge10k "10k nodes"
else
  printf '%-44s %s\n' "10k nodes: convergence" "NOT RUN: $e2e_why_not"
  record "NOT RUN" "10k-node convergence ($e2e_why_not)"
fi
[ "${BENCH_VERDICT:-1}" = 0 ] || verdict
