#!/usr/bin/env bash
# make test: everything CI checks, on a fresh clone with nothing pre-started.
# Starts DynamoDB Local (several servers: each answers one request at a
# time) and ElasticMQ, both fetched from Maven Central on first use; runs
# every Go test against both stores and both queues with the emulators
# required and the race detector on (but for the tests of data volume, run
# after them without it); the confirmation page's browser test and Shopify's
# Node library installing an app in the browser (installing Debian's chromium
# first when it is missing, npm ci'ing the library); beside the Go tests,
# schemathesis over the local runner (infra/fuzz.sh ci) and the SAM
# template's lint, build and scan (checkov); then each Go fuzz target
# briefly, beside the browser tests and soaks. It ends with a table of its
# stages, their times and the cores they kept busy, so that the next
# slowdown shows where it happens.
#
#   DYNAMODB_INSTANCES  DynamoDB Local servers (default 3)
#   TEST_PARALLEL       test binaries run at once (go test -p; default 4)
set -euo pipefail
cd "$(dirname "$0")/.."

instances=${DYNAMODB_INSTANCES:-3}
parallel=${TEST_PARALLEL:-4}
emulators=infra/emulators
work=.cache/test
mkdir -p "$work"

stages=()
started=$SECONDS
report() {
	local rc=$?
	[ -z "${emulators_pid:-}" ] || wait "$emulators_pid" 2>/dev/null || true
	local pid
	for pid in "${schemathesis_pid:-}" "${template_pid:-}" "${go_fuzz_pid:-}"; do
		[ -z "$pid" ] || stop_tree "$pid"
	done
	stop_emulators
	((${#stages[@]})) || exit $rc
	echo
	echo "make test: stages (wall time)"
	printf '  %-40s %6s %6s  %s\n' stage seconds cores result
	local s
	for s in "${stages[@]}"; do
		IFS='|' read -r name secs cores result <<<"$s"
		printf '  %-40s %6s %6s  %s\n' "$name" "$secs" "$cores" "$result"
	done
	printf '  %-40s %6s %6s  %s\n' total $((SECONDS - started)) "$(busy "$cpu_started")" "$([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)")"
	[ -s "$work/go-test.txt" ] && sed -n '/^Go test packages by group/,$p' "$work/go-test.txt"
	exit $rc
}
trap report EXIT
# stop_tree PID stops a background stage: its subshell and what it started.
stop_tree() {
	local child
	for child in $(pgrep -P "$1"); do
		stop_tree "$child"
	done
	kill "$1" 2>/dev/null || true
}

# cpu prints the machine's busy and total CPU ticks so far (/proc/stat;
# nothing where there is none); busy TICKS prints how many cores were busy
# on average since cpu printed TICKS: what a stage left idle shows there.
cpu() {
	[ -r /proc/stat ] && awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9; exit}' /proc/stat
}
busy() {
	local before=$1 now
	now=$(cpu) && [ -n "$before" ] || return 0
	awk -v b="$before" -v n="$now" -v cores="$(nproc)" 'BEGIN {
		split(b, x, " "); split(n, y, " ")
		if (y[2] > x[2]) printf "%.1f", cores * (y[1] - x[1]) / (y[2] - x[2])
	}'
}
cpu_started=$(cpu)

# stage NAME COMMAND...: runs COMMAND, records its time, the cores busy
# meanwhile and its result; a failure stops make test (after the table).
stage() {
	local name=$1 t0=$SECONDS rc=0 c0
	shift
	echo "== $name"
	c0=$(cpu)
	"$@" || rc=$?
	stages+=("$name|$((SECONDS - t0))|$(busy "$c0")|$([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)")")
	return $rc
}

stop_emulators() {
	local i
	for ((i = 0; i < instances; i++)); do
		INSTANCE=$i "$emulators/dynamodb-local.sh" stop >/dev/null 2>&1 || true
	done
	"$emulators/elasticmq.sh" stop >/dev/null 2>&1 || true
}

start_emulators() {
	# The first start fetches; the others (and ElasticMQ) start side by side.
	local i urls pids=()
	INSTANCE=0 "$emulators/dynamodb-local.sh" start >"$work/ddb0.url"
	for ((i = 1; i < instances; i++)); do
		INSTANCE=$i "$emulators/dynamodb-local.sh" start >"$work/ddb$i.url" &
		pids+=($!)
	done
	"$emulators/elasticmq.sh" start >"$work/sqs.url" &
	pids+=($!)
	for i in "${pids[@]}"; do wait "$i"; done
	urls=$(cat "$work"/ddb*.url | paste -sd, -)
	echo "DYNAMODB_ENDPOINT=$urls" >"$work/env"
	echo "SQS_ENDPOINT=$(cat "$work/sqs.url")" >>"$work/env"
	cat "$work/env"
}

# The charge confirmation page's browser test drives Debian's chromium
# (shared/charges/browser_test.go); it fails without it under REQUIRE_EMULATORS.
install_chromium() {
	[ -x /usr/bin/chromium ] && return
	echo "installing chromium for the browser test"
	local sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
}

# golangci-lint (go vet's checks among them) and gofmt: make vet.
vet() {
	make --no-print-directory vet
}

browser=TestConfirmationPageInBrowser
# Shopify's Node library installing an app through chromium (infra/localrunner),
# run beside the other browser test rather than among the parallel packages.
node_auth=TestShopifyNodeAuth
# browser_tests runs both, one after the other (side by side, the install
# test timed out once while the charge test was being built).
browser_tests() {
	go test -count=1 -race -run "^$browser\$" ./shared/charges &&
		go test -count=1 -run "^$node_auth\$" ./infra/localrunner
}
# Tests of data volume rather than concurrency run without the race
# detector, which makes them 15 times slower and judges nothing in them:
# a 5 MB theme asset through JSON both ways on both stores (its concurrent
# reader checks that the store answers whole versions, a store property).
# Every other test runs with -race.
volume='^TestLargeAssetRoundTrip$'
# The soaks under injected faults run in both: small under -race, for the
# detector to watch their concurrent clients, retries and pipeline; at full
# size (a few thousand changes, shared/faults/norace_test.go) without it.
soak='^(TestSoakUnderFaults|TestKeylessRetriesNeverDuplicate)$'
volume_packages=(./shared/themes ./shared/faults)
# The packages that take longest start first, so that none of them starts
# last and runs alone (as measured by the Slowest tests and package times
# of a make test; a package missing here just starts later).
first=(
	shared/api shared/themes shared/smartcollections shared/store/dynamostore
	shared/delivery shared/queue/storequeue shared/webhooks shared/providers
	shared/variants shared/transactions infra/localrunner shared/scripttags
)

# go test's events are kept in .cache/test/go-test.json; infra/testreport
# prints a line per package, the output of what failed, and the times.
go_tests() {
	go build -o "$work/testreport" ./infra/testreport
	local all ordered p
	all=$(go list ./...)
	for p in "${first[@]}"; do
		grep -qx "github.com/storeadmin/adminapi/$p" <<<"$all" && ordered+=("./$p")
	done
	go test -json -count=1 -race -timeout 20m -p "$parallel" -skip "^$browser\$|^$node_auth\$|$volume" "${ordered[@]}" ./... |
		tee "$work/go-test.json" | "$work/testreport" | tee "$work/go-test.txt"
	local status=("${PIPESTATUS[@]}")
	((status[0] == 0 && status[2] == 0))
}

# The emulators' JVMs start while vet runs.
start_emulators >"$work/emulators.log" 2>&1 &
emulators_pid=$!
wait_emulators() {
	local rc=0
	wait "$emulators_pid" || rc=$?
	cat "$work/emulators.log"
	return $rc
}
stage vet vet
stage "emulators ($instances DynamoDB Local, ElasticMQ)" wait_emulators
set -a
source "$work/env"
set +a
export REQUIRE_EMULATORS=1
stage "chromium" install_chromium
# Shopify's Python client for infra/localrunner's TestShopifyPythonClient.
stage "Shopify Python client (venv)" make --no-print-directory shopify-client-venv
SHOPIFY_CLIENT_PYTHON=$(make --no-print-directory -s shopify-client-python)
export SHOPIFY_CLIENT_PYTHON
# Shopify's Node library for infra/localrunner's TestShopifyNodeClient and TestShopifyNodeAuth.
stage "Shopify Node library (npm ci)" make --no-print-directory shopify-node
SHOPIFY_NODE=$(make --no-print-directory -s shopify-node-path)
export SHOPIFY_NODE
# shopify-api-node for infra/localrunner's TestShopifyAPINodeGraphQL.
stage "shopify-api-node (npm ci)" make --no-print-directory shopify-api-node
SHOPIFY_API_NODE=$(make --no-print-directory -s shopify-api-node-path)
export SHOPIFY_API_NODE
stage "Shopify Express app package (npm ci)" make --no-print-directory shopify-app-express
SHOPIFY_APP_EXPRESS=$(make --no-print-directory -s shopify-app-express-path)
export SHOPIFY_APP_EXPRESS
# Shopify's Admin GraphQL schema for shared/admingraphql's TestSchemaMatchesShopify.
stage "Shopify Admin schema (dev-mcp)" make --no-print-directory shopify-schema
SHOPIFY_ADMIN_SCHEMA=$(make --no-print-directory -s shopify-schema-path)
export SHOPIFY_ADMIN_SCHEMA
# schemathesis and the template checks need no emulator: they run beside
# the Go tests, whose waits (queue visibility timeouts, the soaks'
# pipelines, DynamoDB Local answering one request at a time) leave cores
# idle (measured: 1.3 of 2 busy on average when all ran one after the
# other). Their stages below are what is left of them once the others are
# done; each prints its own time. (Their Python environments are built
# under a lock, so starting both at once is safe on a fresh machine.)
background() { # NAME COMMAND...: start COMMAND, its output in $work/NAME.log
	local name=$1
	shift
	(
		t0=$SECONDS rc=0
		"$@" || rc=$?
		echo "$name: $((SECONDS - t0)) s, in the background"
		exit $rc
	) >"$work/$name.log" 2>&1 &
	eval "${name}_pid=$!"
}
wait_background() { # NAME
	local name=$1 rc=0 pid
	eval "pid=\$${name}_pid"
	wait "$pid" || rc=$?
	eval "${name}_pid="
	cat "$work/$name.log"
	return $rc
}
background schemathesis bash infra/fuzz.sh ci schemathesis
background template make --no-print-directory template-check
stage "Go tests (-race, both stores)" go_tests
# The Go fuzz targets: one lane beside the browser tests and the soaks
# (which kept 1.1 and 1.3 of the 2 cores busy one after the other), and a
# second, taking what the first has not, once they and what is left of
# schemathesis and the template checks are done.
fuzz_queue="$work/fuzz-queue"
rm -rf "$fuzz_queue"
background go_fuzz env FUZZ_LANES=1 FUZZ_QUEUE="$fuzz_queue" bash infra/fuzz.sh ci go
stage "browser tests (chromium)" browser_tests
stage "volume and soak (no -race, both stores)" go test -count=1 -run "$volume|$soak" "${volume_packages[@]}"
stop_emulators # the rest needs no emulator
stage "schemathesis (what is left of it)" wait_background schemathesis
stage "template checks (what is left of them)" wait_background template
fuzz_rest() {
	local rc=0
	FUZZ_LANES=1 FUZZ_QUEUE="$fuzz_queue" bash infra/fuzz.sh ci go || rc=1
	wait_background go_fuzz || rc=1
	return $rc
}
stage "Go fuzz targets (what is left of them)" fuzz_rest
