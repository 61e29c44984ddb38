#!/usr/bin/env bash
# deploy/clickhouse.sh — a local ClickHouse for development and the
# integration suite (TestIntegrationClickHouse).
#
#   deploy/clickhouse.sh start    install if missing, start in the background, wait until ready
#   deploy/clickhouse.sh stop     stop the server started by this script
#   deploy/clickhouse.sh status   print whether it runs (exit 0 running, 3 stopped)
#   deploy/clickhouse.sh dsn      print the DSN, e.g. clickhouse://127.0.0.1:19000
#
# The server runs from our own minimal config.xml/users.xml written into the
# data dir, so it does not depend on /etc/clickhouse-server; it listens on
# 127.0.0.1 only. Works with the Debian clickhouse-server 18.16 and with
# current single-binary releases (`clickhouse server`).
#
# Environment:
#   FORUM_CH_DIR        data dir (default: <repo>/data/clickhouse-dev)
#   FORUM_CH_PORT       native protocol port (default 19000)
#   FORUM_CH_HTTP_PORT  HTTP port (default 18123)
#   FORUM_CH_TIMEOUT    seconds to wait for readiness (default 60)
#
# Quiet on success (start prints nothing; use `dsn` for the address), loud
# on failure (the reason and the server log tail go to stderr, exit non-zero).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${FORUM_CH_DIR:-$repo/data/clickhouse-dev}
mkdir -p "$dir" && dir=$(cd "$dir" && pwd) # the config needs absolute paths
port=${FORUM_CH_PORT:-19000}
http_port=${FORUM_CH_HTTP_PORT:-18123}
timeout=${FORUM_CH_TIMEOUT:-60}
pidfile=$dir/clickhouse.pid
portfile=$dir/port
logdir=$dir/log

die() {
	echo "clickhouse.sh: $*" >&2
	exit 1
}

log_tail() {
	local f
	for f in "$logdir/stdout.log" "$logdir/clickhouse-server.err.log" "$logdir/clickhouse-server.log"; do
		if [[ -s $f ]]; then
			echo "---- tail of $f ----" >&2
			tail -n 40 "$f" >&2
		fi
	done
}

# server_cmd prints the command that runs the server, one word per line.
server_cmd() {
	if command -v clickhouse-server >/dev/null 2>&1; then
		command -v clickhouse-server
	elif command -v clickhouse >/dev/null 2>&1; then
		command -v clickhouse
		echo server
	else
		return 1
	fi
}

# client_cmd prints the client command, one word per line.
client_cmd() {
	if command -v clickhouse-client >/dev/null 2>&1; then
		command -v clickhouse-client
	elif command -v clickhouse >/dev/null 2>&1; then
		command -v clickhouse
		echo client
	else
		return 1
	fi
}

install_if_missing() {
	if server_cmd >/dev/null && client_cmd >/dev/null; then
		return 0
	fi
	command -v apt-get >/dev/null 2>&1 || die "clickhouse-server is not installed and apt-get is not available"
	local sudo=()
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null 2>&1 || die "clickhouse-server is not installed; need root or sudo to apt-get install it"
		sudo=(sudo)
	fi
	local out
	out=$(mktemp)
	if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >"$out" 2>&1 ||
		! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
			clickhouse-server clickhouse-client >>"$out" 2>&1; then
		cat "$out" >&2
		rm -f "$out"
		die "apt-get install clickhouse-server failed"
	fi
	rm -f "$out"
	server_cmd >/dev/null && client_cmd >/dev/null || die "clickhouse installed but its binaries are not on PATH"
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

ping() {
	local p=$1
	local -a cli
	mapfile -t cli < <(client_cmd)
	"${cli[@]}" --host 127.0.0.1 --port "$p" -q 'SELECT 1' >/dev/null 2>&1
}

write_config() {
	mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas" "$logdir"
	cat >"$dir/config.xml" <<EOF
<?xml version="1.0"?>
<!-- Written by deploy/clickhouse.sh; rewritten on every start. -->
<yandex>
    <logger>
        <level>warning</level>
        <log>$logdir/clickhouse-server.log</log>
        <errorlog>$logdir/clickhouse-server.err.log</errorlog>
        <size>100M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>$port</tcp_port>
    <http_port>$http_port</http_port>
    <max_connections>1024</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>100</max_concurrent_queries>
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <mark_cache_size>268435456</mark_cache_size>
    <path>$dir/data/</path>
    <tmp_path>$dir/tmp/</tmp_path>
    <user_files_path>$dir/user_files/</user_files_path>
    <format_schema_path>$dir/format_schemas/</format_schema_path>
    <users_config>$dir/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
</yandex>
EOF
	cat >"$dir/users.xml" <<'EOF'
<?xml version="1.0"?>
<!-- Written by deploy/clickhouse.sh; rewritten on every start. -->
<yandex>
    <profiles>
        <default>
            <max_memory_usage>4000000000</max_memory_usage>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
        </default>
        <readonly>
            <readonly>1</readonly>
        </readonly>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>::1</ip>
                <ip>127.0.0.1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
EOF
}

start() {
	install_if_missing
	if pid=$(running_pid); then
		local p
		p=$(current_port)
		ping "$p" && return 0
		die "a server (pid $pid) from $dir is running but does not answer on port $p; run '$0 stop' first"
	fi
	rm -f "$pidfile" "$portfile"
	[[ $port =~ ^[0-9]+$ && $http_port =~ ^[0-9]+$ ]] || die "ports must be numbers (FORUM_CH_PORT=$port FORUM_CH_HTTP_PORT=$http_port)"
	port_busy "$port" && die "port $port is already in use (set FORUM_CH_PORT)"
	port_busy "$http_port" && die "HTTP port $http_port is already in use (set FORUM_CH_HTTP_PORT)"
	write_config
	local -a srv
	mapfile -t srv < <(server_cmd)
	# setsid: the server outlives this shell and is not hit by its job-control signals.
	(cd "$dir" && exec setsid "${srv[@]}" --config-file="$dir/config.xml" \
		</dev/null >"$logdir/stdout.log" 2>&1) &
	local pid=$!
	echo "$pid" >"$pidfile"
	echo "$port" >"$portfile"
	local deadline=$((SECONDS + timeout))
	until ping "$port"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "clickhouse.sh: server exited during startup" >&2
			log_tail
			rm -f "$pidfile" "$portfile"
			exit 1
		fi
		if ((SECONDS >= deadline)); then
			echo "clickhouse.sh: server not ready after ${timeout}s on 127.0.0.1:$port" >&2
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
		echo "clickhouse.sh: server (pid $pid) did not stop in 30s; sending SIGKILL" >&2
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile" "$portfile"
}

status() {
	local pid p
	if pid=$(running_pid); then
		p=$(current_port)
		if ping "$p"; then
			echo "running (pid $pid, clickhouse://127.0.0.1:$p, dir $dir)"
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
dsn) echo "clickhouse://127.0.0.1:$(current_port)" ;;
*)
	echo "usage: $0 start|stop|status|dsn" >&2
	exit 2
	;;
esac
