# Shared by the emulator scripts (dynamodb-local.sh, elasticmq.sh), which set
#   NAME                     the emulator's name (.cache/<NAME>/, log prefix)
#   MAVEN_GROUP MAVEN_ARTIFACT VERSION   what to fetch from Maven Central
#   JAR_GLOB                 a jar whose presence means the fetch is done
# and define
#   answers URL              true once the server at URL serves requests
#   launch PORT              exec the server on PORT (run in the background here)
# then call emulator_main "$@".
#
# start prints http://127.0.0.1:PORT once the server answers (only the URL
# goes to stdout; progress goes to stderr), stop stops it, status prints the
# URL of a running one or exits 1. The pid, URL and output are kept in
# .cache/<NAME>/{pid,url,server.log}. INSTANCE=<n> names a further server
# of the same emulator (its own pid<n>, url<n>, server<n>.log; one fetch
# serves all): DynamoDB Local answers one request at a time, so make test
# runs several.

cd "$(dirname "$0")/../.."
DIR=$PWD/.cache/$NAME
# The jars are fetched once per machine into TOOLS_CACHE (as make's pinned
# venvs are), named by version, so that a fresh clone starts at once.
TOOLS_CACHE=${TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/adminapi-tools}
LIB=$TOOLS_CACHE/$NAME-$VERSION/lib
INSTANCE=${INSTANCE:-}
PIDFILE=$DIR/pid$INSTANCE
URLFILE=$DIR/url$INSTANCE
LOG=$DIR/server$INSTANCE.log

log() { echo "$NAME: $*" >&2; }

running_pid() {
	local pid
	[ -f "$PIDFILE" ] || return 1
	pid=$(cat "$PIDFILE")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

fetch() {
	if compgen -G "$LIB/$JAR_GLOB" >/dev/null; then
		return
	fi
	# One fetch at a time, whichever instance (or clone) asks first.
	mkdir -p "$(dirname "$LIB")"
	exec 8>"$LIB.lock"
	flock -w 600 8 || { log "timed out waiting for $LIB.lock"; return 1; }
	if compgen -G "$LIB/$JAR_GLOB" >/dev/null; then
		exec 8>&-
		return
	fi
	log "fetching $MAVEN_ARTIFACT $VERSION with Maven"
	local work=$LIB.fetch.$$
	rm -rf "$work"
	mkdir -p "$work"
	cat >"$work/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.adminapi</groupId>
  <artifactId>$NAME-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>$MAVEN_GROUP</groupId>
      <artifactId>$MAVEN_ARTIFACT</artifactId>
      <version>$VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
	(cd "$work" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib >&2)
	rm -rf "$LIB"
	mv "$work/lib" "$LIB"
	rm -rf "$work"
	exec 8>&-
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
	exec 9>"$DIR/lock$INSTANCE"
	if ! flock -w 300 9; then
		log "timed out waiting for $DIR/lock"
		return 1
	fi
	if status 2>/dev/null; then
		return
	fi
	fetch
	local attempt port url pid i
	for attempt in 1 2 3 4 5; do
		port=$(free_port)
		url=http://127.0.0.1:$port
		# setsid + redirected fds: the server outlives this script and does
		# not hold the caller's stdout (so $(... start) returns).
		(launch "$port") </dev/null >"$LOG" 2>&1 8>&- 9>&- &
		pid=$!
		echo "$pid" >"$PIDFILE"
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
	local pid i
	if pid=$(running_pid); then
		kill "$pid"
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

emulator_main() {
	case "${1:-}" in
	start) start ;;
	stop) stop ;;
	status) status ;;
	*)
		echo "usage: $0 start|stop|status" >&2
		exit 2
		;;
	esac
}
