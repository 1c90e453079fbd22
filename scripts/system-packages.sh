#!/usr/bin/env bash
# Install the Debian packages the kit needs beyond Python: a Java runtime for Spark campaigns
# (PySpark 4 needs Java 17 or newer), Chromium (the report checks render HTML reports in it
# headless), and the real brokers the kit judges: RabbitMQ (rabbitmq-server) and ActiveMQ
# Classic (activemq); Node.js and Go run the example protocol servers.  Their packages' own services are never started: the kit runs private
# brokers on 127.0.0.1 (mqconform brokers up).  Idempotent: does nothing when all is present.
set -euo pipefail

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
java_ok() {
    command -v java >/dev/null 2>&1 || return 1
    local v
    v=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)
    [ -n "$v" ] && [ "$v" -ge 17 ]
}
java_ok || need+=(openjdk-17-jre-headless)
[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || need+=(rabbitmq-server)
[ -f /usr/share/activemq/bin/activemq.jar ] || need+=(activemq)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v go >/dev/null 2>&1 || need+=(golang-go)   # builds the Go example server (examples/go-qm)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
else
    echo "setup: needs the Debian packages ${need[*]} (run as root, or install them)" >&2
    exit 2
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: needs the Debian packages ${need[*]}, and apt-get is not available" >&2
    exit 2
fi
echo "setup: installing ${need[*]} (apt-get)"
export DEBIAN_FRONTEND=noninteractive
# Keep the packages' services from starting (a system RabbitMQ would listen on every interface).
policy=/usr/sbin/policy-rc.d
made_policy=
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
    "${SUDO[@]}" chmod +x "$policy"
    made_policy=1
fi
cleanup() { [ -n "$made_policy" ] && "${SUDO[@]}" rm -f "$policy"; return 0; }
trap cleanup EXIT
"${SUDO[@]}" apt-get update -qq >/dev/null
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
    || { echo "setup: apt-get could not install ${need[*]}" >&2; exit 2; }
