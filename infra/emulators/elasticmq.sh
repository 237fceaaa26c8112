#!/usr/bin/env bash
# ElasticMQ (an SQS-compatible server) for tests and the local runner.
#
#   infra/emulators/elasticmq.sh start   # prints http://127.0.0.1:PORT once it answers
#   infra/emulators/elasticmq.sh stop
#   infra/emulators/elasticmq.sh status  # prints the URL if running, exits 1 otherwise
#
# The jars are fetched once from Maven Central (with Maven) into
# .cache/elasticmq/lib; the server keeps its queues in memory and listens on
# a free loopback port with strict SQS limits. Its config is
# .cache/elasticmq/elasticmq.conf, its pid .cache/elasticmq/pid, its URL
# .cache/elasticmq/url and its output .cache/elasticmq/server.log.
# Only the URL goes to stdout; progress goes to stderr.
set -euo pipefail

VERSION=1.6.11
cd "$(dirname "$0")/../.."
DIR=$PWD/.cache/elasticmq
PIDFILE=$DIR/pid
URLFILE=$DIR/url
CONF=$DIR/elasticmq.conf
LOG=$DIR/server.log

log() { echo "elasticmq: $*" >&2; }

# answers URL: true when ElasticMQ at URL replies to ListQueues.
answers() {
	local code
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1/?Action=ListQueues" 2>/dev/null) || return 1
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
	if compgen -G "$DIR/lib/elasticmq-server_*.jar" >/dev/null; then
		return
	fi
	log "fetching elasticmq-server $VERSION with Maven"
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
  <artifactId>elasticmq-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.elasticmq</groupId>
      <artifactId>elasticmq-server_2.13</artifactId>
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

# write_conf PORT: in-memory queues, SQS REST API on loopback only, queue
# URLs naming that address, SQS's own limits enforced.
write_conf() {
	cat >"$CONF" <<EOF
include classpath("application.conf")
node-address { protocol = http, host = "127.0.0.1", port = $1, context-path = "" }
rest-sqs { enabled = true, bind-port = $1, bind-hostname = "127.0.0.1", sqs-limits = strict }
rest-stats { enabled = false }
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
		write_conf "$port"
		# setsid + redirected fds: the server outlives this script and does
		# not hold the caller's stdout (so $(... start) returns).
		setsid java -Dconfig.file="$CONF" -cp "$DIR/lib/*" org.elasticmq.server.Main \
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
