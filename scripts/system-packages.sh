#!/usr/bin/env bash
# Install the Debian packages the kit needs beyond Python: a Java runtime for Spark campaigns
# (PySpark 4 needs Java 17 or newer) and Chromium (the report checks render HTML reports in it
# headless).  Idempotent: does nothing when everything is present.
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
"${SUDO[@]}" apt-get update -qq >/dev/null
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
    || { echo "setup: apt-get could not install ${need[*]}" >&2; exit 2; }
