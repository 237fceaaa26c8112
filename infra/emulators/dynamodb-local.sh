#!/usr/bin/env bash
# DynamoDB Local for tests and the local runner.
#
#   infra/emulators/dynamodb-local.sh start   # prints http://127.0.0.1:PORT once it answers
#   infra/emulators/dynamodb-local.sh stop
#   infra/emulators/dynamodb-local.sh status  # prints the URL if running, exits 1 otherwise
#
# The jars are fetched once from Maven Central (with Maven) into
# .cache/dynamodb-local/lib; the server runs in memory (no -sharedDb) on a
# free loopback port, its pid in .cache/dynamodb-local/pid, its URL in
# .cache/dynamodb-local/url and its output in .cache/dynamodb-local/server.log.
# Only the URL goes to stdout; progress goes to stderr.
set -euo pipefail

VERSION=3.1.0
cd "$(dirname "$0")/../.."
DIR=$PWD/.cache/dynamodb-local
PIDFILE=$DIR/pid
URLFILE=$DIR/url
LOG=$DIR/server.log

log() { echo "dynamodb-local: $*" >&2; }

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

running_pid() {
	local pid
	[ -f "$PIDFILE" ] || return 1
	pid=$(cat "$PIDFILE")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

fetch() {
	if compgen -G "$DIR/lib/DynamoDBLocal*.jar" >/dev/null; then
		return
	fi
	log "fetching DynamoDBLocal $VERSION with Maven"
	local work=$DIR/fetch.$$
	rm -rf "$work"
	mkdir -p "$work"
	cat >"$work/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 http://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.adminapi</groupId>
  <artifactId>dynamodb-local-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>software.amazon.dynamodb</groupId>
      <artifactId>DynamoDBLocal</artifactId>
      <version>$VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
	(cd "$work" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib >&2)
	rm -rf "$DIR/lib"
	mv "$work/lib" "$DIR/lib"
	rm -rf "$work"
}

free_port() {
	python3 - <<'EOF' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
EOF
}

start() {
	mkdir -p "$DIR"
	if status 2>/dev/null; then
		return
	fi
	# Serialise concurrent starts. The server must not inherit fd 9 (see
	# 9>&- below), or it would hold the lock for its whole life.
	exec 9>"$DIR/lock"
	if ! flock -w 300 9; then
		log "timed out waiting for $DIR/lock"
		return 1
	fi
	local pid
	if status 2>/dev/null; then
		return
	fi
	fetch
	local attempt port url
	for attempt in 1 2 3 4 5; do
		port=$(free_port)
		url=http://127.0.0.1:$port
		# setsid + redirected fds: the server outlives this script and does
		# not hold the caller's stdout (so $(... start) returns).
		# DynamoDB Local 3.1.0 has no -host option: Jetty binds all
		# interfaces; we only ever talk to it over loopback.
		setsid java -Djava.library.path="$DIR/lib" -cp "$DIR/lib/*" \
			software.amazon.dynamodb.services.local.main.ServerRunner \
			-inMemory -port "$port" -disableTelemetry \
			</dev/null >"$LOG" 2>&1 9>&- &
		pid=$!
		echo "$pid" >"$PIDFILE"
		local i
		for i in $(seq 1 300); do
			if answers "$url"; then
				echo "$url" >"$URLFILE"
				log "pid $pid listening on $url"
				echo "$url"
				return
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		rm -f "$PIDFILE"
		log "attempt $attempt on port $port failed:"
		tail -n 20 "$LOG" >&2 || true
	done
	log "could not start"
	return 1
}

stop() {
	local pid
	if pid=$(running_pid); then
		kill "$pid"
		local i
		for i in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
		log "stopped pid $pid"
	fi
	rm -f "$PIDFILE" "$URLFILE"
}

status() {
	if running_pid >/dev/null && [ -f "$URLFILE" ] && answers "$(cat "$URLFILE")"; then
		cat "$URLFILE"
		return
	fi
	return 1
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
