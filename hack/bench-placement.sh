#!/usr/bin/env bash
# bench-placement.sh runs the placement benchmarks (fabricmap and its peers) and the peer comparison table,
# then prints each measured figure over its target, and fabricmap's time over each peer's on the same shape
# (below 1.00 meets the target / beats the peer). Each benchmark runs COUNT times (3) and its median is used,
# as this machine is shared. Benchmarks, not timed tests, check speed; this only reports.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
table=$(mktemp)
med=$(mktemp)
trap 'rm -f "$out" "$table" "$med"' EXIT
go test -run '^$' -bench 'Place|Preempt|Kueue' -benchtime "${BENCHTIME:-20x}" -count "${COUNT:-3}" ./placement/ | tee "$out"
go test -run '^$' -bench Peers -benchtime "${PEER_BENCHTIME:-5x}" -count "${COUNT:-3}" ./placement/peers/ | tee -a "$out"
# The peer table: every trace replayed with PEER_SEEDS seeds (20) through fabricmap and each peer, jobs run
# their step time on the generic (oversubscribed) network; it also checks fabricmap's step-time targets.
peer_log=$(mktemp)
peer_ok=1
PEER_TABLE="$table" PEER_SEEDS="${PEER_SEEDS:-20}" go test -run TestPeerTable -count 1 -timeout 60m ./placement/peers/ \
  >"$peer_log" 2>&1 || peer_ok=0

echo
echo "== placement quality and step time: fabricmap and its peers on the same traces =="
cat "$table"
if [ "$peer_ok" = 0 ]; then
  grep -E '^\s+compare_test.go|FAIL' "$peer_log" || cat "$peer_log"
fi
rm -f "$peer_log"

# medians prints "NAME NS" for every benchmark of $out, in first-run order: the median ns/op over its runs.
medians() {
  awk '$1 ~ /^Benchmark/ { for (i = 3; i < NF; i++) if ($(i+1) == "ns/op") { if (!($1 in v)) order[++k] = $1; v[$1] = v[$1] " " $i } }
       END { for (o = 1; o <= k; o++) { b = order[o]; n = split(substr(v[b], 2), a, " ")
               for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
               print b, (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) } }' "$out"
}
medians > "$med"

# worst NAME REGEX TARGET_NS: the largest median ns/op among benchmarks matching REGEX, over the target.
worst() {
  awk -v re="$2" -v target="$3" -v name="$1" '
    $1 ~ re && $2 > v { v = $2 }
    END { if (v == 0) { printf "%-46s no figure\n", name; exit }
          printf "%-46s %10.3f ms  target %8.3f ms  ratio %.3f\n", name, v / 1e6, target / 1e6, v / target }' "$med"
}
echo
echo "== measured / target (worst case over gang sizes 8 to 8,192) =="
worst "place, 10k nodes 70 % full" '^BenchmarkPlace/nodes=10000/' 1000000
worst "place, 100k nodes 70 % full" '^BenchmarkPlace/nodes=100000/' 10000000
worst "preempt, 10k nodes, 1,000 running gangs" '^BenchmarkPreempt(-[0-9]+)?$' 100000000
echo
echo "== measured / Kueue's own TAS benchmarks on this kind of machine (peer-benchmarks.md) =="
worst "snapshot 2,500 nodes (Kueue 0.8 ms)" '^BenchmarkKueueSnapshot/nodes=2500/usage=false' 800000
worst "snapshot 2,500 nodes, usage (Kueue 2.9 ms)" '^BenchmarkKueueSnapshot/nodes=2500/usage=true' 2900000
worst "assign 900 pods, 100 nodes (Kueue 4.9 ms)" '^BenchmarkKueueAssignment/nodes=100/' 4900000
worst "assign 2,304 pods, 500 nodes (Kueue 36.6 ms)" '^BenchmarkKueueAssignment/nodes=500/' 36600000
worst "assign 2,304 pods, 2,500 nodes (Kueue 34.5 ms)" '^BenchmarkKueueAssignment/nodes=2500/' 34500000

echo
echo "== fabricmap / peer, same shape (ns/op ratio; peers are this project's implementations) =="
awk '
  $1 ~ /^BenchmarkPeers(KueueShape)?\// {
    split($1, p, "/"); shape = (p[1] ~ /KueueShape/ ? "kueue " : "") p[2] "/" p[3]; sub(/^placer=/, "", p[4]); sub(/-[0-9]+$/, "", p[4])
    t[shape, p[4]] = $2
    if (!(shape in seen)) { seen[shape] = 1; order[++n] = shape }
    if (!(p[4] in pseen)) { pseen[p[4]] = 1; peers[++m] = p[4] }
  }
  END {
    printf "%-30s %12s", "shape", "fabricmap"
    for (j = 1; j <= m; j++) if (peers[j] != "fabricmap") printf " %18s", peers[j]
    printf "\n"
    for (k = 1; k <= n; k++) {
      s = order[k]; f = t[s, "fabricmap"]
      printf "%-30s %9.3f ms", s, f / 1e6
      for (j = 1; j <= m; j++) if (peers[j] != "fabricmap") printf " %9.3f ms %5.2fx", t[s, peers[j]] / 1e6, f / t[s, peers[j]]
      printf "\n"
    }
  }' "$med"
