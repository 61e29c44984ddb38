#!/usr/bin/env bash
# deploy/kafka.sh — a local single-node Apache Kafka (KRaft, combined
# broker+controller) for development and the integration suite
# (TestIntegrationKafka*). The embedded kfake broker stays the default for
# `forum run` and unit tests; this is the reference broker.
#
#   deploy/kafka.sh start     fetch the jars if missing, format, start in the background, wait until ready
#   deploy/kafka.sh stop      stop the broker started by this script
#   deploy/kafka.sh status    print whether it runs (exit 0 running, 3 stopped)
#   deploy/kafka.sh brokers   print the bootstrap address, e.g. 127.0.0.1:19092
#
#   FORUM_TEST_KAFKA=$(deploy/kafka.sh brokers) go test ./bus/ -run Integration
#
# No tarball download: the broker jars (org.apache.kafka:kafka_2.13 and its
# runtime classpath, plus a log4j2 binding) come from Maven Central through
# deploy/kafka/pom.xml and `mvn dependency:copy-dependencies`, into a cache
# dir that is reused once complete. Needs java (17+) and mvn on PATH.
#
# Environment:
#   FORUM_KAFKA_VERSION  broker version (default 4.4.0; 3.9.x works too)
#   FORUM_KAFKA_DIST     jar cache (default: <repo>/data/kafka-dist); jars go in <dist>/<version>
#   FORUM_KAFKA_DIR      data dir: storage, config, logs, pid (default: <repo>/data/kafka-dev)
#   FORUM_KAFKA_PORT     broker port (default 19092); the controller listens on port+1
#   FORUM_KAFKA_HEAP     JVM heap (default 512m)
#   FORUM_KAFKA_TIMEOUT  seconds to wait for readiness (default 90)
#
# Quiet on success, loud on failure (Maven output or the broker log tail is
# printed and the exit status is non-zero).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=${FORUM_KAFKA_VERSION:-4.4.0}
dist_root=${FORUM_KAFKA_DIST:-$repo/data/kafka-dist}
dist=$dist_root/$version
dir=${FORUM_KAFKA_DIR:-$repo/data/kafka-dev}
port=${FORUM_KAFKA_PORT:-19092}
heap=${FORUM_KAFKA_HEAP:-512m}
timeout=${FORUM_KAFKA_TIMEOUT:-90}
pidfile=$dir/kafka.pid
portfile=$dir/port
logdir=$dir/log
conf=$dir/server.properties
java=${JAVA_HOME:+$JAVA_HOME/bin/}java

die() {
	echo "kafka.sh: $*" >&2
	exit 1
}

log_tail() {
	local f
	for f in "$logdir/kafka.out" "$logdir/server.log"; do
		if [[ -s $f ]]; then
			echo "---- tail of $f ----" >&2
			tail -n 60 "$f" >&2
		fi
	done
}

# fetch_dist copies the broker's runtime classpath into $dist, once: a
# .complete stamp marks a finished copy, so an interrupted one is redone.
fetch_dist() {
	[[ -f $dist/.complete ]] && return 0
	command -v mvn >/dev/null 2>&1 || die "mvn is not on PATH (needed once to fetch the Kafka $version jars)"
	rm -rf "$dist"
	mkdir -p "$dist"
	local out
	out=$(mktemp)
	if ! mvn -q -B -f "$repo/deploy/kafka/pom.xml" \
		dependency:copy-dependencies \
		-Dkafka.version="$version" -DoutputDirectory="$dist" >"$out" 2>&1; then
		cat "$out" >&2
		rm -f "$out"
		rm -rf "$dist"
		die "fetching Kafka $version through Maven failed (see above)"
	fi
	rm -f "$out"
	[[ -f $dist/kafka_2.13-$version.jar ]] || die "Maven finished but $dist has no kafka_2.13-$version.jar"
	touch "$dist/.complete"
}

running_pid() {
	[[ -f $pidfile ]] || return 1
	local pid
	pid=$(cat "$pidfile" 2>/dev/null || true)
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

current_port() {
	if running_pid >/dev/null && [[ -s $portfile ]]; then
		cat "$portfile"
	else
		echo "$port"
	fi
}

port_busy() {
	# bash's /dev/tcp: succeeds when something accepts on the port.
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# ready: the broker accepts connections and has logged that it started.
ready() {
	port_busy "$1" && grep -qs 'Kafka Server started' "$logdir/server.log"
}

# cluster_id makes a Kafka Uuid string: 16 random bytes, base64url, unpadded.
# One that starts with '-' is drawn again: the storage tool's argument parser
# would read it as an option (1 run in 64 failed that way).
cluster_id() {
	local id
	while :; do
		id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
		[[ $id != -* ]] && break
	done
	printf '%s' "$id"
}

write_config() {
	mkdir -p "$dir/kraft" "$logdir"
	sed -e "s|@PORT@|$port|g" \
		-e "s|@CONTROLLER_PORT@|$((port + 1))|g" \
		-e "s|@DATA_DIR@|$dir|g" \
		"$repo/deploy/kafka/server.properties.tmpl" >"$conf"
}

# format initialises KRaft storage once; the version it was formatted with is
# kept so a later start with another version fails clearly instead of deep in
# the broker log.
format() {
	if [[ -f $dir/kraft/meta.properties ]]; then
		local had
		had=$(cat "$dir/version" 2>/dev/null || echo unknown)
		[[ $had == "$version" ]] ||
			die "$dir was formatted by Kafka $had, not $version: remove it or set FORUM_KAFKA_DIR"
		return 0
	fi
	local out
	out=$(mktemp)
	if ! "$java" -Xmx256m -cp "$dist/*" \
		-Dlog4j2.configurationFile="$repo/deploy/kafka/log4j2.properties" -Dkafka.logs.dir="$logdir" \
		kafka.tools.StorageTool format -t "$(cluster_id)" -c "$conf" >"$out" 2>&1; then
		cat "$out" >&2
		rm -f "$out"
		die "formatting KRaft storage in $dir/kraft failed"
	fi
	rm -f "$out"
	echo "$version" >"$dir/version"
}

start() {
	if pid=$(running_pid); then
		local p
		p=$(current_port)
		ready "$p" && return 0
		die "a broker (pid $pid) from $dir is running but does not answer on port $p; run '$0 stop' first"
	fi
	rm -f "$pidfile" "$portfile"
	[[ $port =~ ^[0-9]+$ ]] || die "FORUM_KAFKA_PORT must be a number, not '$port'"
	command -v "$java" >/dev/null 2>&1 || die "java is not on PATH (Java 17+ is needed)"
	port_busy "$port" && die "port $port is already in use (set FORUM_KAFKA_PORT)"
	port_busy "$((port + 1))" && die "controller port $((port + 1)) is already in use (set FORUM_KAFKA_PORT)"
	fetch_dist
	write_config
	format
	# A fresh server.log, so readiness is judged on this run's lines only.
	rm -f "$logdir"/server.log*
	# setsid: the broker outlives this shell and is not hit by its job-control signals.
	(cd "$dir" && exec setsid "$java" -Xms"$heap" -Xmx"$heap" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
		-Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$repo/deploy/kafka/log4j2.properties" -Dkafka.logs.dir="$logdir" \
		-cp "$dist/*" kafka.Kafka "$conf" \
		</dev/null >"$logdir/kafka.out" 2>&1) &
	local pid=$!
	echo "$pid" >"$pidfile"
	echo "$port" >"$portfile"
	local deadline=$((SECONDS + timeout))
	until ready "$port"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "kafka.sh: broker exited during startup" >&2
			log_tail
			rm -f "$pidfile" "$portfile"
			exit 1
		fi
		if ((SECONDS >= deadline)); then
			echo "kafka.sh: broker not ready after ${timeout}s on 127.0.0.1:$port" >&2
			log_tail
			kill "$pid" 2>/dev/null || true
			rm -f "$pidfile" "$portfile"
			exit 1
		fi
		sleep 0.5
	done
}

stop() {
	local pid
	if ! pid=$(running_pid); then
		rm -f "$pidfile" "$portfile"
		return 0
	fi
	kill "$pid" 2>/dev/null || true
	local i
	for ((i = 0; i < 60; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "kafka.sh: broker (pid $pid) did not stop in 30s; sending SIGKILL" >&2
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile" "$portfile"
}

status() {
	local pid p
	if pid=$(running_pid); then
		p=$(current_port)
		if ready "$p"; then
			echo "running (pid $pid, Kafka $(cat "$dir/version" 2>/dev/null || echo "?"), 127.0.0.1:$p, dir $dir)"
			return 0
		fi
		echo "started (pid $pid) but not answering on port $p"
		return 1
	fi
	echo "stopped"
	return 3
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
brokers) echo "127.0.0.1:$(current_port)" ;;
*)
	echo "usage: $0 start|stop|status|brokers" >&2
	exit 2
	;;
esac
