#!/usr/bin/env bash
# make test: everything CI checks, on a fresh clone with nothing pre-started.
# Starts DynamoDB Local and ElasticMQ (both fetched from Maven Central on
# first use), runs every Go test against both stores and both queues with
# the emulators required, fuzzes the local runner with schemathesis and each
# Go fuzz target briefly (infra/fuzz.sh ci), then lints, builds and scans (checkov) the SAM
# template. Installs Debian's chromium first when it is missing (the
# confirmation page's browser test).
set -euo pipefail
cd "$(dirname "$0")/.."

emulators=infra/emulators
stop() {
	"$emulators/dynamodb-local.sh" stop >/dev/null 2>&1 || true
	"$emulators/elasticmq.sh" stop >/dev/null 2>&1 || true
}
trap stop EXIT

DYNAMODB_ENDPOINT=$("$emulators/dynamodb-local.sh" start)
SQS_ENDPOINT=$("$emulators/elasticmq.sh" start)
export DYNAMODB_ENDPOINT SQS_ENDPOINT REQUIRE_EMULATORS=1
echo "DynamoDB Local at $DYNAMODB_ENDPOINT, ElasticMQ at $SQS_ENDPOINT"

# The charge confirmation page's browser test drives Debian's chromium
# (shared/charges/browser_test.go); it fails without it under REQUIRE_EMULATORS.
if [ ! -x /usr/bin/chromium ]; then
	echo "installing chromium for the browser test"
	sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

go test -count=1 -race -timeout 20m ./...
stop # the fuzzing needs no emulator

bash infra/fuzz.sh ci

make --no-print-directory template-check
