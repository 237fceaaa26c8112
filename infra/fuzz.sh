#!/usr/bin/env bash
# Fuzzing: schemathesis against the local runner with docs/openapi.yaml, then
# the Go fuzz targets.
#
#   infra/fuzz.sh ci     what `make test` runs: one round of every phase,
#                        20 examples per operation, a fixed seed, each Go
#                        fuzz target for 10 s (about 3 minutes in all)
#   infra/fuzz.sh long   `make fuzz`: every phase, then 4 more rounds of
#                        random and stateful data, 100 examples per
#                        operation each, from a random seed (30,000+
#                        requests), each Go fuzz target for 2 min
#
# FUZZ_MAX_EXAMPLES, FUZZ_ROUNDS, FUZZ_SEED, FUZZ_GO_TIME and FUZZ_WORKERS
# override the budget; FUZZ_LANES and FUZZ_QUEUE set how the Go fuzz
# targets are shared out (see below); FUZZ_CHECKS (default all) and FUZZ_EXCLUDE_CHECKS
# (default none) choose schemathesis' checks. A round is one schemathesis process: its memory grows
# with the examples it keeps (about 1 GB at 100 per operation), so the long
# run takes several rounds rather than one big one, and each is capped at
# FUZZ_MEMORY_KB of address space (6 GiB) so that it fails, rather than
# take the machine's memory from others. The runner is built from this tree, listens on a free loopback port
# over a fresh DATA_DIR (so it loads the demo shop), and is stopped at the end;
# its log is kept in .cache/fuzz/runner.log, schemathesis' reports (JUnit and
# a pytest file reproducing each failure) in .cache/fuzz/report.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-ci}
part=${2:-all} # all, schemathesis or go (make test times them apart)
case $mode in
ci)
	max_examples=${FUZZ_MAX_EXAMPLES:-20}
	rounds=${FUZZ_ROUNDS:-1}
	seed=${FUZZ_SEED:-20240311}
	go_time=${FUZZ_GO_TIME:-10s}
	;;
long)
	max_examples=${FUZZ_MAX_EXAMPLES:-100}
	rounds=${FUZZ_ROUNDS:-5}
	seed=${FUZZ_SEED:-$RANDOM$RANDOM}
	go_time=${FUZZ_GO_TIME:-2m}
	;;
*)
	echo "usage: $0 [ci|long] [all|schemathesis|go]" >&2
	exit 2
	;;
esac
# schemathesis' workers are threads of one Python process, which holds one
# core (the GIL): the operations are split into shards run side by side, one
# process each, of about equal time as measured (/com; /admin and /web).
# Every path is in exactly one shard, and links between operations stay
# within a resource.
workers=${FUZZ_WORKERS:-1}
shards=('^/com/' '^/(admin|web)/')
memory_kb=${FUZZ_MEMORY_KB:-6291456}

# The demo shop's apps (shared/seed/demo.json): Demo App holds every scope;
# the read-only app is uninstalled by the last run, which revokes its token.
token=demo-app-token-0123456789abcdef
uninstall_token=read-only-token-0123456789abcdef

status=0

# schemathesis_run and go_fuzz_run are the two parts (their bodies are not
# indented: they hold a heredoc and an inline Python program).
schemathesis_run() {
make --no-print-directory schemathesis-venv >/dev/null
venv=$(make --no-print-directory -s venv-path)
# schemathesis through Python with ast.parse serialized: hypothesis parses
# source code to describe filters, and in CPython 3.11 the AST constructor's
# recursion counter is shared by the interpreter's threads, so two workers
# parsing at once fail with "AST constructor recursion depth mismatch".
st() (
	ulimit -v "$memory_kb"
	SCHEMATHESIS_HOOKS=fuzz_hooks PYTHONPATH=infra exec "$venv/bin/python" -c '
import ast, sys, threading
_parse, _lock = ast.parse, threading.Lock()
def parse(*args, **kwargs):
    with _lock:
        return _parse(*args, **kwargs)
ast.parse = parse
from schemathesis.cli import schemathesis
sys.argv[0] = "schemathesis"
sys.exit(schemathesis())' "$@"
)

work=.cache/fuzz
rm -rf "$work"
mkdir -p "$work/data" "$work/report"
go build -o "$work/localrunner" ./infra/localrunner

runner_pid=
stop() {
	if [ -n "$runner_pid" ]; then
		kill "$runner_pid" 2>/dev/null || true
		wait "$runner_pid" 2>/dev/null || true
	fi
}
trap stop EXIT

RATE_LIMIT=off PORT=0 DATA_DIR="$work/data" STORE=embedded SEED_FILE= POLL_INTERVAL=1h \
	"$work/localrunner" 2>"$work/runner.log" &
runner_pid=$!
base=
for _ in $(seq 1 300); do
	base=$(grep -o '"addr":"http://127\.0\.0\.1:[0-9]*"' "$work/runner.log" 2>/dev/null | head -1 | cut -d'"' -f4 || true)
	[ -n "$base" ] && break
	kill -0 "$runner_pid" 2>/dev/null || { cat "$work/runner.log" >&2; exit 1; }
	sleep 0.1
done
[ -n "$base" ] || { echo "the local runner did not start" >&2; cat "$work/runner.log" >&2; exit 1; }
echo "local runner at $base (log: $work/runner.log)"

# Records the demo shop lacks, so that the operations on one reach past 404:
# an article, a comment on another article (deleting an article deletes its
# comments), a custom collection with a collect, Canada with its provinces. Their ids (and the demo
# shop's order, its transaction and variant, and an event) are given to the operations that
# take them in the path; every other id is generated.
api() {
	curl -sf -X "$1" -H "X-Service-Access-Token: $token" -H 'Content-Type: application/json' \
		${3:+--data "$3"} "$base$2"
}
id_of() { python3 -c 'import json, sys; v = json.load(sys.stdin)[sys.argv[1]]; print((v[0] if isinstance(v, list) else v)["id"])' "$1"; }
blog=241253187 product=632910392 variant=808950810 order=450789469 transaction=389404469
article=$(api POST /web/blogs/$blog/articles.json '{"article":{"title":"Fuzzing"}}' | id_of article)
commented=$(api POST /web/blogs/$blog/articles.json '{"article":{"title":"Comments"}}' | id_of article)
comment=$(api POST /web/comments.json "{\"comment\":{\"body\":\"Hi\",\"author\":\"Ann\",\"email\":\"ann@example.com\",\"blog_id\":$blog,\"article_id\":$commented}}" | id_of comment)
collection=$(api POST /com/custom_collections.json '{"custom_collection":{"title":"Fuzzing"}}' | id_of custom_collection)
collect=$(api POST /com/collects.json "{\"collect\":{\"product_id\":$product,\"collection_id\":$collection}}" | id_of collect)
event=$(api GET '/com/events.json?limit=1' | id_of events)
country=$(api POST /com/countries.json '{"country":{"code":"CA"}}' | id_of country)
province=$(api GET /com/countries/$country/provinces.json | id_of provinces)
cat >"$work/schemathesis.toml" <<TOML
[[operations]]
include-path-regex = '^/web/comments/[{]id[}]'
parameters = { "path.id" = $comment }
[[operations]]
include-path-regex = '^/web/blogs/[{]blog_id[}]/articles/[{]id[}]'
parameters = { "path.id" = $article }
[[operations]]
include-path-regex = '^/com/collects/[{]id[}]'
parameters = { "path.id" = $collect }
[[operations]]
include-path = '/com/variants/{id}.json'
parameters = { "path.id" = $variant }
[[operations]]
include-path = '/com/events/{id}.json'
parameters = { "path.id" = $event }
[[operations]]
include-path = '/com/orders/{id}/events.json'
parameters = { "path.id" = $order }
[[operations]]
include-path = '/com/orders/{order_id}/transactions/{id}.json'
parameters = { "path.order_id" = $order, "path.id" = $transaction }
[[operations]]
include-path-regex = '^/com/orders/[{]order_id[}]/transactions(/count)?[.]json$'
parameters = { "path.order_id" = $order }
[[operations]]
include-path-regex = '^/(com|admin)/countries/[{]id[}]'
parameters = { "path.id" = $country }
[[operations]]
include-path-regex = '^/com/countries/[{]country_id[}]/provinces/[{]id[}]'
parameters = { "path.country_id" = $country, "path.id" = $province }
[[operations]]
include-path-regex = '^/com/countries/[{]country_id[}]/provinces(/count)?[.]json'
parameters = { "path.country_id" = $country }
TOML

# Every check, positive and negative data acceptance included: the
# document states what the service accepts and refuses. Where the answer
# depends on what the run itself did before (a taken handle, the order's
# ledger, the 20-theme limit), infra/fuzz_hooks.py drops exactly that
# answer, by its message; FUZZ_EXCLUDE_CHECKS=<names> leaves checks out
# while you chase one.
checks=${FUZZ_CHECKS:-all}
exclude_checks=${FUZZ_EXCLUDE_CHECKS-}
common=(
	"$base/openapi.json" --url "$base"
	--checks "$checks" ${exclude_checks:+--exclude-checks "$exclude_checks"}
	--max-examples "$max_examples"
	--workers "$workers"
	--generation-database none
	--suppress-health-check too_slow,filter_too_much
	--request-timeout 30
	--no-color
)

start=$SECONDS
# Every operation but the app uninstall, which would revoke the token the
# others use; it runs last, on its own, as the read-only app. The first
# round runs every phase; later ones, from the next seeds, only the random
# and stateful phases (the examples and the coverage of the schemas' edges
# would be the same again).
for round in $(seq 1 "$rounds"); do
	phases=examples,coverage,fuzzing,stateful
	[ "$round" = 1 ] || phases=fuzzing,stateful
	echo "schemathesis round $round of $rounds: $phases, seed $((seed + round - 1)), ${#shards[@]} shards"
	pids=()
	for i in "${!shards[@]}"; do
		st --config-file "$work/schemathesis.toml" run "${common[@]}" \
			--seed $((seed + round - 1)) --phases "$phases" \
			-H "X-Service-Access-Token: $token" \
			--include-path-regex "${shards[$i]}" --exclude-operation-id uninstallApp \
			--report junit --report-junit-path "$work/report/junit-$round-$i.xml" \
			--report pytest --report-pytest-path "$work/report/test_failures-$round-$i.py" \
			>"$work/schemathesis-$round-$i.log" 2>&1 &
		pids+=($!)
	done
	for i in "${!shards[@]}"; do
		rc=0
		wait "${pids[$i]}" || rc=$?
		echo "---- schemathesis round $round, operations matching ${shards[$i]} (exit $rc)"
		cat "$work/schemathesis-$round-$i.log"
		((rc == 0)) || status=$rc
	done
done
st --config-file "$work/schemathesis.toml" run "${common[@]}" --seed "$seed" \
	-H "X-Service-Access-Token: $uninstall_token" \
	--include-operation-id uninstallApp || status=$?
echo "schemathesis: $((SECONDS - start)) s, $rounds round(s) of $max_examples examples per operation, seed $seed"
stop
runner_pid=
}

go_fuzz_run() {
# Go fuzz targets: -fuzz takes one target of one package at a time. The seed
# corpora (testdata/fuzz/<Target>) also run in every plain `go test`.
targets=(
	"FuzzDecode ./shared/httpapi"
	"FuzzDecodeObject ./shared/httpapi"
	"FuzzParseTime ./shared/dates"
	"FuzzTimeJSON ./shared/admin"
	"FuzzMoney ./shared/admin"
	"FuzzAmount ./shared/admin"
	"FuzzRender ./shared/textile"
	"FuzzParsePublishedAt ./shared/articles"
	"FuzzRules ./shared/smartcollections"
)
# fuzz_once runs one target; a finding is written to testdata/fuzz and fails
# it. Go's engine can also end a run that found nothing with "context
# deadline exceeded" (the fuzz time ran out while a worker was busy, e.g.
# minimizing an interesting input): that run is made again, once.
fuzz_once() {
	local out
	out=$(mktemp)
	go test -run='^$' -fuzz="^$1\$" -fuzztime="$go_time" -parallel=1 "$2" 2>&1 | tee "$out"
	local rc=${PIPESTATUS[0]}
	if ((rc != 0)) && ! grep -q 'Failing input written to' "$out" && grep -q 'context deadline exceeded' "$out"; then
		rc=75 # the engine's timeout, not a finding
	fi
	rm -f "$out"
	return $rc
}
# fuzz_target runs one target (and again after the engine's timeout).
fuzz_target() {
	echo "go fuzz $1 ($2, $go_time)"
	local rc=0
	fuzz_once "$1" "$2" || rc=$?
	if ((rc == 75)); then
		echo "go fuzz $1: the run ended on the engine's deadline without a finding; running it again"
		rc=0
		fuzz_once "$1" "$2" || rc=$?
	fi
	return $rc
}
# FUZZ_LANES lanes (default 2), each a target at a time with one fuzzing
# worker: with two, both cores fuzz all the time, and one lane's build of
# its next target's instrumented binary overlaps the other's fuzzing (one
# lane of two workers idled a core while it built). Lanes take the next
# target from FUZZ_QUEUE (a directory; default one of this run's own), so
# that runs sharing it split the targets between them: make test starts
# one lane beside the browser tests and soaks, which leave a core idle,
# and a second when they are done. Each lane's output is printed when it
# is done.
lanes=${FUZZ_LANES:-2}
queue=${FUZZ_QUEUE:-$(mktemp -d)}
mkdir -p "$queue"
# next_target prints the index of the next target no lane has taken, or
# fails when none is left.
next_target() {
	local n=0
	{ exec 9>>"$queue/lock" && flock 9; } || return 1
	[ ! -e "$queue/next" ] || n=$(cat "$queue/next") || return 1
	[[ $n =~ ^[0-9]+$ ]] && echo $((n + 1)) >"$queue/next" || return 1
	flock -u 9
	((n < ${#targets[@]})) && echo "$n"
}
lane() {
	local i rc=0
	while i=$(next_target); do
		fuzz_target ${targets[$i]} || rc=1
	done
	return $rc
}
logs=$(mktemp -d)
pids=()
# Stopped (make test stops its background stages when a stage fails), the
# lanes stop too, rather than fuzz on alone.
trap 'kill "${pids[@]}" 2>/dev/null; pkill -P "$$" 2>/dev/null; exit 143' TERM
for ((l = 0; l < lanes; l++)); do
	lane >"$logs/$l" 2>&1 &
	pids+=($!)
done
for pid in "${pids[@]}"; do
	wait "$pid" || status=1
done
for ((l = 0; l < lanes; l++)); do
	cat "$logs/$l"
done
[ -n "${FUZZ_QUEUE:-}" ] || rm -rf "$queue"
rm -rf "$logs"
}

case $part in
all)
	schemathesis_run
	go_fuzz_run
	;;
schemathesis) schemathesis_run ;;
go) go_fuzz_run ;;
*) echo "usage: $0 [ci|long] [all|schemathesis|go]" >&2; exit 2 ;;
esac
exit $status
