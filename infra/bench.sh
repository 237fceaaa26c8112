#!/usr/bin/env bash
# make bench: a loopback load run of the local runner beside a bare net/http
# JSON server (infra/benchbare), then the Go benchmarks of ./shared/...
# (handlers: shared/api/bench_test.go), the webhook pipeline's
# (shared/delivery/bench_test.go) three times, and a summary against the
# targets:
#   runner req/s >= 0.75 x bare req/s at maximum throughput,
#   p99 <= 5 ms at 1,000 req/s,
#   handler overhead without storage <= 50 us per request,
#   webhook deliveries >= 1,000/s draining a burst (BenchmarkLocalPipeline),
#   change-to-delivery p50 < 200 ms at a steady 500 changes/s
#   (BenchmarkLocalPipelineSteady), and with one receiver of ten taking 5 s
#   (BenchmarkLocalPipelineSlowReceiver, the nine others' deliveries);
# the pipeline's verdicts take the median of the three runs.
# Then what each kind of call costs in DynamoDB (BenchmarkCost against
# DynamoDB Local, started here: read and write units counted, priced beside
# the call's floor; docs/operations.md's cost table is its output), and the
# cold starts of every API function against a hello-world bootstrap
# (infra/coldstart, target <= 1.15x).
# Needs only Go: hey is installed into .cache/bin on first use. Both servers
# listen on free 127.0.0.1 ports and are stopped on exit. Figures are
# printed, not enforced; BENCH_STRICT=1 makes a missed target fail the run.
#
# Knobs: BENCH_DURATION (10s), BENCH_CONCURRENCY (32) and BENCH_ROUNDS (2,
# best kept) for the maximum throughput runs; the rate-limited run is
# 10 workers x 100 req/s.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${BENCH_DURATION:-10s}
conc=${BENCH_CONCURRENCY:-32}
rounds=${BENCH_ROUNDS:-2}
rate_workers=10 rate_per_worker=100 # hey -q is per worker: 1,000 req/s in all
token=demo-app-token-0123456789abcdef # the demo seed's app (public)

bin=$PWD/.cache/bin
hey=$bin/hey
if [[ ! -x $hey ]]; then
	echo "installing hey into .cache/bin"
	mkdir -p "$bin"
	GOBIN=$bin go install github.com/rakyll/hey@v0.1.5
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/adminapi-bench.XXXXXX")
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "building the local runner and the bare server"
go build -o "$tmp/localrunner" ./infra/localrunner
go build -o "$tmp/benchbare" ./infra/benchbare

# wait_addr LOG PID: print the http://127.0.0.1:PORT a server logged once it listens.
wait_addr() {
	local log=$1 pid=$2 addr
	for _ in $(seq 300); do
		addr=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$log" | head -n1 || true)
		if [[ -n $addr ]]; then
			echo "$addr"
			return
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "server exited before listening:" >&2
			cat "$log" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "server did not listen within 30s:" >&2
	cat "$log" >&2
	return 1
}

# request METHOD URL [BODY]: one HTTP/1.1 request with the demo token over
# bash's /dev/tcp (no curl needed); prints the raw response.
request() {
	local method=$1 url=$2 body=${3-}
	local hostport=${url#http://}
	hostport=${hostport%%/*}
	local path=/${url#http://*/}
	(
		exec 3<>"/dev/tcp/${hostport%:*}/${hostport#*:}"
		printf '%s %s HTTP/1.1\r\nHost: %s\r\nX-Service-Access-Token: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
			"$method" "$path" "$hostport" "$token" "${#body}" "$body" >&3
		cat <&3
	)
}

status_of() { head -n1 | awk '{print $2}'; }

# Local runner: fresh data directory (the demo seed is loaded at start), free
# port; it logs "listening" with its address at the default info level.
RATE_LIMIT=off PORT=0 DATA_DIR=$tmp/data "$tmp/localrunner" >"$tmp/runner.log" 2>&1 &
runner_pid=$!
pids+=("$runner_pid")
runner=$(wait_addr "$tmp/runner.log" "$runner_pid")

PORT=0 "$tmp/benchbare" >"$tmp/bare.log" 2>&1 &
bare_pid=$!
pids+=("$bare_pid")
bare=$(wait_addr "$tmp/bare.log" "$bare_pid")
echo "local runner at $runner, bare server at $bare"

# One redirect to read back.
res=$(request POST "$runner/web/redirects.json" '{"redirect":{"path":"/bench","target":"/target"}}')
if [[ $(status_of <<<"$res") != 201 ]]; then
	echo "creating the redirect failed:" >&2
	echo "$res" >&2
	exit 1
fi
id=$(grep -o '"id":[0-9]*' <<<"$res" | head -n1 | cut -d: -f2)
target_url=$runner/web/redirects/$id.json
if [[ $(request GET "$target_url" | status_of) != 200 ]]; then
	echo "GET $target_url is not 200" >&2
	exit 1
fi

# load NAME URL HEY-ARGS...: run hey, keep its report in $tmp/NAME.txt and
# fail if any response was not a 200 (the figures would mean nothing).
load() {
	local name=$1 url=$2
	shift 2
	"$hey" "$@" -H "X-Service-Access-Token: $token" "$url" >"$tmp/$name.txt"
	# "[200]\t<n> responses" under the status codes, "[<n>]\t<error>" under the errors.
	local ok total
	read -r ok total < <(awk '
		/^Status code distribution:/ {s = 1; e = 0; next}
		/^Error distribution:/ {s = 0; e = 1; next}
		s && $1 ~ /^\[/ {n += $2; if ($1 == "[200]") ok = $2}
		e && $1 ~ /^\[/ {gsub(/[][]/, "", $1); n += $1}
		END {print ok + 0, n + 0}' "$tmp/$name.txt")
	if ((ok == 0 || ok != total)); then
		echo "$name: $ok of $total responses were 200:" >&2
		cat "$tmp/$name.txt" >&2
		exit 1
	fi
}
# Figures from a hey report: requests per second, and a percentile in ms.
rps() { awk '/Requests\/sec:/ {printf "%.0f", $2}' "$tmp/$1.txt"; }
pct() { awk -v p="$2" '$2 == "in" && $1 ~ ("^" p "%") {printf "%.2f", $3 * 1000}' "$tmp/$1.txt"; }

declare -A url=([runner]=$target_url [bare]=$bare/web/redirects/1.json)
loadavg_before=$(cut -d" " -f1-3 /proc/loadavg 2>/dev/null || echo "?")
for server in runner bare; do
	echo "$server: warm-up (2s)"
	load "$server-warmup" "${url[$server]}" -z 2s -c "$conc"
done
# Maximum throughput: rounds alternate between the servers and each keeps its
# best, so that a burst of other work on the machine spoils one round of one
# server rather than the comparison.
for round in $(seq "$rounds"); do
	for server in runner bare; do
		echo "$server: maximum throughput, round $round of $rounds ($duration, $conc connections)"
		load "$server-max-$round" "${url[$server]}" -z "$duration" -c "$conc"
		if [[ ! -f $tmp/$server-max.txt ]] || (( $(rps "$server-max-$round") > $(rps "$server-max") )); then
			cp "$tmp/$server-max-$round.txt" "$tmp/$server-max.txt"
		fi
	done
done
for server in runner bare; do
	echo "$server: 1,000 req/s ($duration, $rate_workers workers x $rate_per_worker req/s)"
	load "$server-rate" "${url[$server]}" -z "$duration" -c "$rate_workers" -q "$rate_per_worker"
done
loadavg_after=$(cut -d" " -f1-3 /proc/loadavg 2>/dev/null || echo "?")

# Stop the servers before the Go benchmarks so that nothing else competes.
kill "$runner_pid" "$bare_pid" 2>/dev/null || true
wait "$runner_pid" "$bare_pid" 2>/dev/null || true

echo "Go benchmarks (go test -run '^\$' -bench . -skip BenchmarkLocalPipeline -benchmem ./shared/...)"
go test -run '^$' -bench . -skip BenchmarkLocalPipeline -benchmem ./shared/... | grep -v '^ok\|no test files' | tee "$tmp/gobench.txt"
echo "Webhook pipeline benchmarks (go test -run '^\$' -bench BenchmarkLocalPipeline -benchmem -count 3 ./shared/delivery)"
go test -run '^$' -bench BenchmarkLocalPipeline -benchmem -count 3 ./shared/delivery | grep -v '^ok\|no test files' | tee "$tmp/pipebench.txt"

runner_rps=$(rps runner-max) bare_rps=$(rps bare-max)
ratio=$(awk -v a="$runner_rps" -v b="$bare_rps" 'BEGIN {printf "%.2f", a / b}')
runner_p99=$(pct runner-rate 99) bare_p99=$(pct bare-rate 99)
overhead=$(awk '$1 ~ /^BenchmarkRedirectGetNoStorage/ {for (i = 2; i < NF; i++) if ($(i + 1) == "us/req") printf "%.1f", $i}' "$tmp/gobench.txt")

# pipe NAME UNIT: "min-max" and the median of a pipeline benchmark's metric
# over its runs, as "RANGE MEDIAN".
pipe() {
	awk -v name="$1" -v unit="$2" '
		$1 ~ ("^" name "(-[0-9]+)?$") {for (i = 2; i < NF; i++) if ($(i + 1) == unit) v[n++] = $i}
		END {
			if (n == 0) {print "? 1e9"; exit}
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) {t = v[i]; v[i] = v[j]; v[j] = t}
			printf "%g-%g %g\n", v[0], v[n - 1], v[int(n / 2)]
		}' "$tmp/pipebench.txt"
}
read -r burst_range burst_med < <(pipe BenchmarkLocalPipeline deliveries/s)
read -r burst_allocs _ < <(pipe BenchmarkLocalPipeline allocs/op)
read -r steady_p50_range steady_p50 < <(pipe BenchmarkLocalPipelineSteady p50-ms)
read -r steady_p99_range _ < <(pipe BenchmarkLocalPipelineSteady p99-ms)
read -r slow_rate_range _ < <(pipe BenchmarkLocalPipelineSlowReceiver deliveries/s)
read -r slow_p50_range slow_p50 < <(pipe BenchmarkLocalPipelineSlowReceiver p50-ms)
read -r slow_p99_range _ < <(pipe BenchmarkLocalPipelineSlowReceiver p99-ms)

missed=0
# verdict VAR CONDITION: VAR=ok when the awk expression holds, else MISSED (counted).
verdict() {
	if awk "BEGIN {exit !($2)}"; then
		printf -v "$1" ok
	else
		printf -v "$1" MISSED
		missed=$((missed + 1))
	fi
}
verdict v_ratio "$ratio >= 0.75"
verdict v_p99 "$runner_p99 <= 5"
verdict v_over "${overhead:-1e9} <= 50"
verdict v_burst "$burst_med >= 1000"
verdict v_steady "$steady_p50 < 200"
verdict v_slow "$slow_p50 < 200"

echo
echo "Summary (loopback; $(nproc) cores shared by hey and the server)"
echo "load average $loadavg_before before the load runs, $loadavg_after after: other work on the machine skews the figures"
printf '%-44s %14s %14s %8s\n' "" "local runner" "bare net/http" "target"
printf '%-44s %14s %14s\n' "max throughput, $conc conns, best of $rounds: req/s" "$runner_rps" "$bare_rps"
printf '%-44s %14s %14s\n' "max throughput: p50 / p99 ms" "$(pct runner-max 50) / $(pct runner-max 99)" "$(pct bare-max 50) / $(pct bare-max 99)"
printf '%-44s %14s %14s %8s  %s\n' "runner / bare req/s" "$ratio" "" ">= 0.75" "$v_ratio"
printf '%-44s %14s %14s\n' "1,000 req/s run: achieved req/s" "$(rps runner-rate)" "$(rps bare-rate)"
printf '%-44s %14s %14s\n' "1,000 req/s run: p50 ms" "$(pct runner-rate 50)" "$(pct bare-rate 50)"
printf '%-44s %14s %14s %8s  %s\n' "1,000 req/s run: p99 ms" "$runner_p99" "$bare_p99" "<= 5" "$v_p99"
printf '%-44s %14s %14s %8s  %s\n' "handler overhead without storage, us/req" "${overhead:-?}" "" "<= 50" "$v_over"
echo
echo "Webhook pipeline (embedded store, loopback receivers; min-max of 3 runs, verdict on the median)"
printf '%-44s %29s %8s  %s\n' "burst: deliveries/s" "$burst_range" ">= 1000" "$v_burst"
printf '%-44s %29s\n' "burst: allocations per delivery" "$burst_allocs"
printf '%-44s %29s %8s  %s\n' "steady 500 changes/s: p50 ms" "$steady_p50_range" "< 200" "$v_steady"
printf '%-44s %29s\n' "steady 500 changes/s: p99 ms" "$steady_p99_range"
printf '%-44s %29s\n' "1 of 10 receivers 5 s: the 9 others' del./s" "$slow_rate_range"
printf '%-44s %29s %8s  %s\n' "1 of 10 receivers 5 s: the 9 others' p50 ms" "$slow_p50_range" "< 200" "$v_slow"
printf '%-44s %29s\n' "1 of 10 receivers 5 s: the 9 others' p99 ms" "$slow_p99_range"
echo
echo "Go benchmarks (handlers: per request, embedded store unless NoStorage; pipeline: per delivery, or per steady run):"
awk '$1 ~ /^Benchmark/' "$tmp/gobench.txt" "$tmp/pipebench.txt" | sed 's/^/  /'
echo
echo "Cost per call against DynamoDB Local (go test -run '^\$' -bench BenchmarkCost -benchtime 20x ./shared/api; USD per million calls, x-floor: over the least the call could cost)"
ddb=$(INSTANCE=bench infra/emulators/dynamodb-local.sh start)
DYNAMODB_ENDPOINT=$ddb REQUIRE_EMULATORS=1 go test -run '^$' -bench BenchmarkCost -benchtime 20x ./shared/api | awk '$1 ~ /^BenchmarkCost/' | sed 's/^/  /'
echo
echo "From commit to event, filtered list and webhook delivery, against DynamoDB Local's stream and ElasticMQ, no batching window (go test -run '^\$' -bench BenchmarkAWSFeedLatency -benchtime 30x ./shared/delivery; ms)"
sqs=$(INSTANCE=bench infra/emulators/elasticmq.sh start)
DYNAMODB_ENDPOINT=$ddb SQS_ENDPOINT=$sqs REQUIRE_EMULATORS=1 go test -run '^$' -bench BenchmarkAWSFeedLatency -benchtime 30x ./shared/delivery | awk '$1 ~ /^BenchmarkAWSFeedLatency/' | sed 's/^/  /'
INSTANCE=bench infra/emulators/elasticmq.sh stop >/dev/null
INSTANCE=bench infra/emulators/dynamodb-local.sh stop >/dev/null
echo
echo "Cold start: exec to the first answer under a fake Lambda Runtime API, median of interleaved rounds, over a hello-world bootstrap (target <= 1.15)"
if ! go run ./infra/coldstart -rounds "${BENCH_COLD_ROUNDS:-60}" -max 1.15 | sed 's/^/  /'; then
	missed=$((missed + 1))
fi

if ((missed > 0)); then
	echo
	echo "$missed target(s) missed."
	if [[ ${BENCH_STRICT:-} == 1 ]]; then
		exit 1
	fi
fi
