#!/usr/bin/env bash
# ElasticMQ (an SQS-compatible server) for tests: start | stop | status
# (see lib.sh). Fetched once from Maven Central into TOOLS_CACHE;
# queues in memory, loopback only, strict SQS limits.
set -euo pipefail

NAME=elasticmq
MAVEN_GROUP=org.elasticmq
MAVEN_ARTIFACT=elasticmq-server_2.13
VERSION=1.6.11
JAR_GLOB='elasticmq-server_*.jar'

# answers URL: true when ElasticMQ at URL replies to ListQueues.
answers() {
	local code
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1/?Action=ListQueues" 2>/dev/null) || return 1
	[ "$code" = 200 ]
}

# launch PORT with a config naming that loopback address in queue URLs.
launch() {
	cat >"$DIR/elasticmq.conf" <<CONF
include classpath("application.conf")
node-address { protocol = http, host = "127.0.0.1", port = $1, context-path = "" }
rest-sqs { enabled = true, bind-port = $1, bind-hostname = "127.0.0.1", sqs-limits = strict }
rest-stats { enabled = false }
CONF
	exec setsid java -Dconfig.file="$DIR/elasticmq.conf" -cp "$LIB/*" org.elasticmq.server.Main
}

source "$(dirname "$0")/lib.sh"
emulator_main "$@"
