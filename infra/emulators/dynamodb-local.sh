#!/usr/bin/env bash
# DynamoDB Local for tests and the local runner: start | stop | status
# (see lib.sh). Fetched once from Maven Central into TOOLS_CACHE;
# runs in memory on a free loopback port.
set -euo pipefail

NAME=dynamodb-local
MAVEN_GROUP=software.amazon.dynamodb
MAVEN_ARTIFACT=DynamoDBLocal
VERSION=3.1.0
JAR_GLOB='DynamoDBLocal*.jar'

# answers URL: true when DynamoDB Local at URL replies to ListTables.
answers() {
	local code
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -X POST "$1" \
		-H 'Content-Type: application/x-amz-json-1.0' \
		-H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
		-H 'Authorization: AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0' \
		-d '{}' 2>/dev/null) || return 1
	[ "$code" = 200 ]
}

# launch PORT. DynamoDB Local 3.1.0 has no -host option: Jetty binds all
# interfaces; we only ever talk to it over loopback. A test run is minutes
# of the same few requests: the C1 compiler alone (no C2) and the serial
# collector spend about a fifth less CPU on a run of the Go tests than the
# defaults, whose C2 compiles and G1 threads pay off only in a longer life
# (measured: 61 s against 76 s of CPU for four packages' DynamoDB tests).
launch() {
	exec setsid java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xms512m \
		-Djava.library.path="$LIB" -cp "$LIB/*" \
		software.amazon.dynamodb.services.local.main.ServerRunner \
		-inMemory -port "$1" -disableTelemetry
}

source "$(dirname "$0")/lib.sh"
emulator_main "$@"
