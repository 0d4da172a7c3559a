#!/usr/bin/env bash
# bench.sh runs fabricmap's Go benchmarks and prints each measured figure next to its target as a ratio
# (below 1.00 meets the target). Benchmarks, not timed tests, check speed and memory; this only reports.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -run '^$' -bench . -benchtime "${BENCHTIME:-50x}" -count 1 ./test/footprint/ | tee "$out"
go test -run '^$' -bench Merge10k -benchtime "${SCALE_BENCHTIME:-5x}" -count 1 ./topology/ | tee -a "$out"
go test -run '^$' -bench Assess10k -benchtime "${SCALE_BENCHTIME:-5x}" -count 1 ./health/ | tee -a "$out"
# An ibnetdiscover capture of 15,000 hosts (1.1 million lines): to a tree, and one agent's probe run on it.
go test -p 1 -run '^$' -bench 'CaptureToTree|ProbeFabric' -benchtime "${SCALE_BENCHTIME:-5x}" -count 1 \
  ./sources/ibfabric/ ./discovery/ibnetdiscover/ | tee -a "$out"
# A 100 MB UFM ports answer, read over 127.0.0.1 through the aggregator's client (decoded as a stream).
go test -run '^$' -bench HugePorts -benchtime 3x -count 1 ./sources/ufm/ | tee -a "$out"
# Hostile UFM answers of 32 MB and 200 MB (a million entries, a huge string or list, deep nesting), same path.
go test -run '^$' -bench HostileAnswers -benchtime 1x -count 1 ./sources/ufm/ | tee -a "$out"
# The whole system at 10,016 nodes (real API server, aggregator binary; about 3 minutes). The e2e package needs
# root (network namespaces for its other tests); E2E_SCALE=0 skips it.
if [ "${E2E_SCALE:-1}" != 0 ] && [ "$(id -u)" = 0 ]; then
  go test -run '^$' -bench Converge10k -benchtime 1x -count 1 -timeout 30m ./test/e2e/ | tee -a "$out"
fi

# ratio NAME BENCH UNIT TARGET: the mean of the benchmark's UNIT column over the target.
ratio() {
  awk -v bench="$2" -v unit="$3" -v target="$4" -v name="$1" '
    $1 ~ "^"bench"(-[0-9]+)?$" { for (i = 3; i < NF; i++) if ($(i+1) == unit) { sum += $i; n++ } }
    END { if (n == 0) { printf "%-34s no figure\n", name; exit }
          v = sum / n; printf "%-34s %10.2f %-14s target %6.1f  ratio %.2f\n", name, v, unit, target, v / target }' "$out"
}
echo
echo "== measured / target =="
ratio "agent probe cycle, CPU (in-process)" BenchmarkProbeCycle cpu-ms/cycle 50
ratio "agent binary, CPU per cycle" BenchmarkAgentBinary cpu-ms/cycle 50
ratio "agent binary, peak RSS" BenchmarkAgentBinary peak-RSS-MiB 30
# The machine's charge for a timer wake-up (see BenchmarkWakeBaseline), and the agent's figure net of it.
ratio "wake-up baseline, CPU per cycle" BenchmarkWakeBaseline cpu-ms/cycle 50
awk '$1 ~ /^BenchmarkAgentBinary(-[0-9]+)?$/ { for (i = 3; i < NF; i++) if ($(i+1) == "cpu-ms/cycle") { a += $i; na++ } }
     $1 ~ /^BenchmarkWakeBaseline(-[0-9]+)?$/ { for (i = 3; i < NF; i++) if ($(i+1) == "cpu-ms/cycle") { w += $i; nw++ } }
     END { if (na && nw) { v = a / na - w / nw; printf "%-34s %10.2f %-14s target %6.1f  ratio %.2f\n", "agent binary, CPU net of baseline", v, "cpu-ms/cycle", 50, v / 50 } }' "$out"
ratio "merge 10k reports, wall" BenchmarkMerge10kReports ns/op 2000000000
ratio "merge 10k reports, peak heap" BenchmarkMerge10kReports peak-heap-MiB 1024
ratio "merge and fabric health 10k nodes, wall" BenchmarkAssess10k ns/op 2000000000
ratio "IB capture 15k hosts to tree, wall" BenchmarkCaptureToTree/15k ns/op 5000000000
ratio "IB probe 15k hosts, peak heap" BenchmarkProbeFabric/15k/file peak-heap-MiB 16
ratio "IB probe 15k hosts (tool), heap" BenchmarkProbeFabric/15k/tool peak-heap-MiB 16
ratio "UFM 100 MB answer, peak heap" BenchmarkDecodeHugePortsAnswer peak-heap-MiB 300
# The worst of the hostile answers, not their mean: each must stay within the target.
awk '$1 ~ /^BenchmarkHostileAnswers\// { for (i = 3; i < NF; i++) if ($(i+1) == "peak-MiB" && $i > v) { v = $i; w = $1 } }
     END { if (w != "") printf "%-34s %10.2f %-14s target %6.1f  ratio %.2f (%s)\n", "UFM hostile answer, worst peak heap", v, "peak-MiB", 256, v / 256, w }' "$out"
ratio "10k nodes: cold convergence" BenchmarkConverge10k cold-converge-s 60
ratio "10k nodes: aggregator peak RSS" BenchmarkConverge10k peak-RSS-MiB 1024
awk '$1 ~ /^BenchmarkConverge10k(-[0-9]+)?$/ { for (i = 3; i < NF; i++) if ($(i+1) == "steady-writes") { v = $i; n = 1 } }
     END { if (n) printf "%-34s %10.0f %-14s target %6d  %s\n", "10k nodes: writes in steady state", v, "writes", 0, (v == 0 ? "met" : "NOT MET") }' "$out"
