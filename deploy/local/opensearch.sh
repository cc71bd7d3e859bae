#!/usr/bin/env bash
# A local single-node OpenSearch (or Elasticsearch) for the demo and the tests, built from Maven
# Central.
#
#   deploy/local/opensearch.sh start|stop|status|url|logs
#
# Environment (all optional):
#   BLOOMSPAN_NODE                 opensearch (default) or elasticsearch: which engine to start
#   BLOOMSPAN_OPENSEARCH_VERSION   2.19.6 (default) or a 3.x version (then a Java >= 21 from
#                                  /usr/lib/jvm is used)
#   BLOOMSPAN_ES_VERSION           Elasticsearch version, 8.17.0 (default) or 7.17.9
#   BLOOMSPAN_NODE_PORT            HTTP port (transport: port + 100); default 9200 for OpenSearch,
#                                  9210 for Elasticsearch 8.x, 9220 for Elasticsearch 7.x, so an
#                                  Elasticsearch node never collides with the usual OpenSearch one
#   BLOOMSPAN_OPENSEARCH_PORT      the same for OpenSearch (older name, still honoured)
#   BLOOMSPAN_CACHE                download cache, default ~/.cache/bloomspan
#   BLOOMSPAN_NODE_ROOT            node files (install, config, data, logs, pid), default
#                                  /var/tmp/bloomspan-opensearch (readable by the node's user)
#   BLOOMSPAN_OPENSEARCH_USER      unprivileged user the node runs as when we are root,
#                                  default bloomspan-os (created if missing)
#   BLOOMSPAN_START_TIMEOUT        seconds to wait for yellow health, default 180
#
# OpenSearch: org.opensearch.distribution.integ-test-zip:opensearch (zip). It ships only the
# transport module, so the modules bloomspan needs are added from their published jars:
# mapper-extras (rank_feature), lang-painless (ingest script processor), analysis-common and
# ingest-common (gsub).
# Elasticsearch: org.elasticsearch.distribution.integ-test-zip:elasticsearch (zip): transport and
# x-pack security only, no bundled JDK (it runs on the machine's Java 17), security switched off.
# 7.x gets mapper-extras from org.elasticsearch.plugin:mapper-extras-client; 8.x has no published
# jar of it (so no rank_feature there) and neither version has lang-painless or ingest-common.
set -euo pipefail
# runuser and useradd live in sbin, which a minimal PATH (cron, env -i) leaves out.
PATH="$PATH:/usr/sbin:/sbin"

NODE_KIND="${BLOOMSPAN_NODE:-opensearch}"
case "$NODE_KIND" in
    opensearch)
        VERSION="${BLOOMSPAN_OPENSEARCH_VERSION:-2.19.6}"
        PORT="${BLOOMSPAN_NODE_PORT:-${BLOOMSPAN_OPENSEARCH_PORT:-9200}}" ;;
    elasticsearch)
        VERSION="${BLOOMSPAN_ES_VERSION:-8.17.0}"
        if [ "${VERSION%%.*}" -ge 8 ]; then PORT="${BLOOMSPAN_NODE_PORT:-9210}"; else PORT="${BLOOMSPAN_NODE_PORT:-9220}"; fi ;;
    *) printf '[opensearch.sh] error: BLOOMSPAN_NODE=%s: give opensearch or elasticsearch\n' "$NODE_KIND" >&2; exit 2 ;;
esac
TRANSPORT_PORT=$((PORT + 100))
CACHE="${BLOOMSPAN_CACHE:-$HOME/.cache/bloomspan}"
NODE_ROOT="${BLOOMSPAN_NODE_ROOT:-/var/tmp/bloomspan-opensearch}"
OS_USER="${BLOOMSPAN_OPENSEARCH_USER:-bloomspan-os}"
START_TIMEOUT="${BLOOMSPAN_START_TIMEOUT:-180}"
CLUSTER_NAME="bloomspan-local"
# Modules added to the integ-test distribution: maven group:artifact=module folder.
if [ "$NODE_KIND" = opensearch ]; then
    MODULES="org.opensearch.plugin:mapper-extras-client=mapper-extras
org.opensearch.plugin:lang-painless=lang-painless
org.opensearch.plugin:analysis-common=analysis-common
org.opensearch.plugin:ingest-common=ingest-common"
elif [ "${VERSION%%.*}" -lt 8 ]; then
    MODULES="org.elasticsearch.plugin:mapper-extras-client=mapper-extras"
else
    MODULES=""
fi

ARTIFACTS="$CACHE/$NODE_KIND/$VERSION"            # downloaded zip + module jars (cache)
INSTALL="$NODE_ROOT/install/$NODE_KIND-$VERSION"   # unpacked distribution, shared read-only
NODE_DIR="$NODE_ROOT/node-$PORT"                   # config, data, logs, pid of this node
PID_FILE="$NODE_DIR/$NODE_KIND.pid"
URL="http://127.0.0.1:$PORT"

log() { printf '[opensearch.sh] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

major_version() { echo "${VERSION%%.*}"; }

pick_java() {
    # OpenSearch 2.x and Elasticsearch run on the default Java 17; OpenSearch 3.x needs Java 21+,
    # which lies in /usr/lib/jvm.
    if [ "$NODE_KIND" = opensearch ] && [ "$(major_version)" -ge 3 ]; then
        local candidate
        for candidate in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*-2[1-9]* /usr/lib/jvm/*25*; do
            if [ -x "$candidate/bin/java" ]; then echo "$candidate"; return; fi
        done
        die "OpenSearch $VERSION needs Java >= 21; none found in /usr/lib/jvm"
    fi
    if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then echo "$JAVA_HOME"; return; fi
    local java_bin
    java_bin="$(readlink -f "$(command -v java)")" || die "java not found (Java 17 is needed)"
    dirname "$(dirname "$java_bin")"
}

mvn_copy() { # mvn_copy GROUP:ARTIFACT:VERSION[:TYPE] DEST_DIR
    mkdir -p "$2"
    # Maven writes (colour codes even with -q) to stdout; stdout carries only the URL.
    mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="$1" -DoutputDirectory="$2" -Dmdep.overWriteIfNewer=true >&2 \
        || die "could not download $1 from Maven Central"
}

mvn_with_dependencies() { # mvn_with_dependencies GROUP:ARTIFACT DEST_DIR: the jar and its runtime deps
    local group="${1%%:*}" artifact="${1#*:}" pom_dir
    pom_dir="$(mktemp -d)"
    cat > "$pom_dir/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>bloomspan.local</groupId><artifactId>fetch-$artifact</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>$group</groupId><artifactId>$artifact</artifactId><version>$VERSION</version></dependency>
  </dependencies>
</project>
EOF
    mvn -q -B -Dstyle.color=never -f "$pom_dir/pom.xml" dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$2" >&2 || die "could not download $1:$VERSION and its dependencies"
    rm -rf "$pom_dir"
}

download() {
    if [ -f "$ARTIFACTS/.complete" ]; then return; fi
    command -v mvn >/dev/null || die "Maven (mvn) is needed to fetch $NODE_KIND $VERSION"
    log "downloading $NODE_KIND $VERSION from Maven Central into $ARTIFACTS"
    rm -rf "$ARTIFACTS"
    mvn_copy "org.$NODE_KIND.distribution.integ-test-zip:$NODE_KIND:$VERSION:zip" "$ARTIFACTS"
    local module
    for module in $MODULES; do
        mvn_with_dependencies "${module%%=*}" "$ARTIFACTS/modules/${module#*=}"
    done
    touch "$ARTIFACTS/.complete"
}

plugin_class() { # plugin_class JAR: the one top-level *Plugin class the module jar holds
    local cls
    cls="$(unzip -Z1 "$1" | grep -E 'Plugin\.class$' | grep -v '\$' | head -n 1)"
    [ -n "$cls" ] || die "no plugin class found in $1"
    cls="${cls%.class}"
    echo "${cls//\//.}"
}

write_descriptor() { # write_descriptor DIR NAME CLASSNAME [EXTENDED]
    local java_version=17
    if [ "$NODE_KIND" = opensearch ] && [ "$(major_version)" -ge 3 ]; then java_version=21; fi
    cat > "$1/plugin-descriptor.properties" <<EOF
description=$2 module (assembled by bloomspan from Maven Central jars)
version=$VERSION
name=$2
classname=$3
java.version=$java_version
$NODE_KIND.version=$VERSION
extended.plugins=${4:-}
has.native.controller=false
EOF
}

install_elasticsearch() { # adds the 7.x mapper-extras to $INSTALL.tmp/elasticsearch-$VERSION
    local home="$INSTALL.tmp/elasticsearch-$VERSION" jar
    if [ -d "$ARTIFACTS/modules/mapper-extras" ]; then
        mkdir -p "$home/modules/mapper-extras"
        for jar in "$ARTIFACTS/modules/mapper-extras/"*.jar; do
            [ -e "$home/lib/$(basename "$jar")" ] || cp "$jar" "$home/modules/mapper-extras/"
        done
        write_descriptor "$home/modules/mapper-extras" mapper-extras \
            "$(plugin_class "$home/modules/mapper-extras/mapper-extras-client-$VERSION.jar")"
    fi
    finish_install "$home"
}

finish_install() { # finish_install HOME: move the assembled distribution into place
    mv "$1" "$INSTALL"
    rm -rf "$INSTALL.tmp"
    chmod -R a+rX "$INSTALL"
    touch "$INSTALL/.complete"
}

install_node() {
    if [ -f "$INSTALL/.complete" ]; then return; fi
    download
    log "unpacking $NODE_KIND $VERSION into $INSTALL"
    rm -rf "$INSTALL" "$INSTALL.tmp"
    mkdir -p "$INSTALL.tmp"
    unzip -q "$ARTIFACTS/$NODE_KIND-$VERSION.zip" -d "$INSTALL.tmp"
    if [ "$NODE_KIND" = elasticsearch ]; then install_elasticsearch; return; fi
    local home="$INSTALL.tmp/opensearch-$VERSION" m jar
    for m in mapper-extras analysis-common lang-painless ingest-common; do
        mkdir -p "$home/modules/$m"
        for jar in "$ARTIFACTS/modules/$m/"*.jar; do
            # Jars the server already has (core and its libraries) must not be loaded twice.
            [ -e "$home/lib/$(basename "$jar")" ] || cp "$jar" "$home/modules/$m/"
        done
    done
    # The plugin class was renamed in 3.x (PainlessPlugin -> PainlessModulePlugin): read it from the jar.
    write_descriptor "$home/modules/mapper-extras" mapper-extras "$(plugin_class "$home/modules/mapper-extras/mapper-extras-client-$VERSION.jar")"
    write_descriptor "$home/modules/lang-painless" lang-painless "$(plugin_class "$home/modules/lang-painless/lang-painless-$VERSION.jar")"
    write_descriptor "$home/modules/analysis-common" analysis-common "$(plugin_class "$home/modules/analysis-common/analysis-common-$VERSION.jar")" lang-painless
    write_descriptor "$home/modules/ingest-common" ingest-common "$(plugin_class "$home/modules/ingest-common/ingest-common-$VERSION.jar")" lang-painless
    # Painless compiles scripts into classes at run time (as in the official module's policy).
    cat > "$home/modules/lang-painless/plugin-security.policy" <<'EOF'
grant {
  permission java.lang.RuntimePermission "createClassLoader";
  permission java.lang.RuntimePermission "getClassLoader";
};
EOF
    finish_install "$home"
}

ensure_user() {
    if id "$OS_USER" >/dev/null 2>&1; then return; fi
    log "creating unprivileged user $OS_USER for the node (OpenSearch refuses to run as root)"
    useradd --system --no-create-home --shell /usr/sbin/nologin "$OS_USER"
}

as_node_user() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "$OS_USER" -- "$@"
    else
        "$@"
    fi
}

node_pid() { # prints the pid if our node process is alive
    [ -f "$PID_FILE" ] || return 1
    local pid
    pid="$(cat "$PID_FILE" 2>/dev/null)" || return 1
    [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
    # Guard against pid reuse: the process must be a node with our node's config dir.
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "$NODE_DIR" || \
        grep -qzE "^(OPENSEARCH|ES)_PATH_CONF=$NODE_DIR/config\$" "/proc/$pid/environ" 2>/dev/null || return 1
    echo "$pid"
}

port_taken() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

health() {
    curl -fsS --max-time 5 "$URL/_cluster/health?wait_for_status=yellow&timeout=${1:-1s}" 2>/dev/null
}

write_config() {
    mkdir -p "$NODE_DIR/data" "$NODE_DIR/logs"
    rm -rf "$NODE_DIR/config"
    cp -r "$INSTALL/config" "$NODE_DIR/config"
    # jvm.options names gc/error logs and heap dumps relative to the install dir, which the node's
    # user cannot write: point them into the node dir.
    sed -i -e "s#file=logs/#file=$NODE_DIR/logs/#" -e "s#ErrorFile=logs/#ErrorFile=$NODE_DIR/logs/#" \
        -e "s#HeapDumpPath=data#HeapDumpPath=$NODE_DIR/data#" "$NODE_DIR/config/jvm.options"
    cat > "$NODE_DIR/config/$NODE_KIND.yml" <<EOF
cluster.name: $CLUSTER_NAME
node.name: bloomspan-node-$PORT
network.host: 127.0.0.1
http.port: $PORT
transport.port: $TRANSPORT_PORT
discovery.type: single-node
path.data: $NODE_DIR/data
path.logs: $NODE_DIR/logs
# Developer machines and CI are often nearly full; do not turn indices read-only.
cluster.routing.allocation.disk.threshold_enabled: false
action.destructive_requires_name: false
EOF
    if [ "$NODE_KIND" = elasticsearch ]; then
        # A throw-away local node: plain http, no users (8.x would otherwise generate TLS
        # certificates and an elastic password on first start).
        echo "xpack.security.enabled: false" >> "$NODE_DIR/config/$NODE_KIND.yml"
    fi
    if [ "$(id -u)" -eq 0 ]; then chown -R "$OS_USER" "$NODE_DIR"; fi
}

cmd_start() {
    local pid
    if pid="$(node_pid)"; then
        if health 5s >/dev/null; then log "already running (pid $pid) at $URL"; echo "$URL" >&3; return 0; fi
    fi
    if port_taken "$PORT"; then
        die "port $PORT is taken by a process that is not this script's node; set BLOOMSPAN_NODE_PORT"
    fi
    if port_taken "$TRANSPORT_PORT"; then
        die "transport port $TRANSPORT_PORT (http port + 100) is taken; set BLOOMSPAN_NODE_PORT"
    fi
    local java_home t0
    java_home="$(pick_java)"
    mkdir -p "$NODE_ROOT"
    chmod 755 "$NODE_ROOT"
    install_node
    [ "$(id -u)" -eq 0 ] && ensure_user
    write_config
    # The start timeout is the boot's: a first download on a slow link must not eat it (the
    # node would come up after the script had given up on it).
    t0=$(date +%s)
    log "starting $NODE_KIND $VERSION on $URL (java: $java_home, node dir: $NODE_DIR)"
    rm -f "$PID_FILE"
    local env_prefix=OPENSEARCH
    [ "$NODE_KIND" = elasticsearch ] && env_prefix=ES
    as_node_user env -i PATH=/usr/bin:/bin HOME="$NODE_DIR" \
        "${env_prefix}_JAVA_HOME=$java_home" JAVA_HOME="$java_home" \
        "${env_prefix}_PATH_CONF=$NODE_DIR/config" \
        "${env_prefix}_JAVA_OPTS=-Xms512m -Xmx1g" \
        "$INSTALL/bin/$NODE_KIND" -d -p "$PID_FILE" \
        > "$NODE_DIR/logs/launcher.out" 2>&1 3>&- 9>&- || {
            log "launcher failed:"; tail -n 50 "$NODE_DIR/logs/launcher.out" >&2 || true; exit 1; }
    local deadline=$((t0 + START_TIMEOUT))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        if health 1s >/dev/null; then
            log "ready in $(( $(date +%s) - t0 ))s: $NODE_KIND $(curl -fsS "$URL/_nodes/_local?filter_path=nodes.*.version" | python3 -c 'import json,sys; print(*[n["version"] for n in json.load(sys.stdin)["nodes"].values()])')"
            echo "$URL" >&3
            return 0
        fi
        if [ -f "$PID_FILE" ] && ! node_pid >/dev/null; then break; fi
        # With -d the launcher returns once the node forked; no pid file by now means it died.
        if [ ! -f "$PID_FILE" ] && [ "$(date +%s)" -gt $((t0 + 90)) ]; then break; fi
        sleep 1
    done
    log "$NODE_KIND did not reach yellow health within ${START_TIMEOUT}s; log tail:"
    tail -n 60 "$NODE_DIR/logs/$CLUSTER_NAME.log" >&2 2>/dev/null || tail -n 60 "$NODE_DIR/logs/launcher.out" >&2 || true
    cmd_stop || true
    exit 1
}

cmd_stop() {
    local pid
    if ! pid="$(node_pid)"; then log "not running"; rm -f "$PID_FILE"; return 0; fi
    log "stopping pid $pid"
    kill "$pid"
    local i
    for i in $(seq 1 60); do
        [ -d "/proc/$pid" ] || { rm -f "$PID_FILE"; log "stopped"; return 0; }
        sleep 0.5
    done
    log "pid $pid did not stop in 30s; killing"
    kill -9 "$pid" || true
    rm -f "$PID_FILE"
}

cmd_status() {
    local pid
    if pid="$(node_pid)" && health 2s >/dev/null; then
        echo "running pid=$pid url=$URL node=$NODE_KIND version=$VERSION"
    else
        echo "stopped"
        return 3
    fi
}

with_lock() { # one start/stop at a time per port: a second `start` racing the first would
              # otherwise rewrite the config and pid file under a node that is booting
    mkdir -p "$NODE_ROOT"
    exec 9>"$NODE_ROOT/.lock-$PORT"
    flock -w "$START_TIMEOUT" 9 || die "another start/stop of port $PORT is still running"
    "$@"
}

case "${1:-}" in
    # stdout of `start` is exactly one line, the URL: everything else goes to stderr.
    start) with_lock cmd_start 3>&1 1>&2 ;;
    stop) with_lock cmd_stop ;;
    status) cmd_status ;;
    url) echo "$URL" ;;
    logs) tail -n "${2:-100}" "$NODE_DIR/logs/$CLUSTER_NAME.log" ;;
    download) download; install_node ;;
    *) echo "usage: $0 start|stop|status|url|logs [N]|download" >&2; exit 2 ;;
esac
