# Sourced by the ops/bin scripts (bin/ in the release package).
#   run_ops_main CLASS ARGS...  builds ops when needed, then execs Java on CLASS from the
#                               repository root.
#   ops_build_if_needed         only the build: mvn -q -pl ops -am package -DskipTests, when the
#                               build is missing or a pom or main source file is newer than it.
#   ops_java CLASS ARGS...      runs Java on CLASS (not exec'd), from the repository root.
#   ops_print_version NAME      prints NAME, the version and the commit, and exits.
# Environment: JAVA_OPTS (extra JVM options), SHALE_SKIP_BUILD=1 (never build),
# SHALE_BUILD_PROGRESS=1 (name each module as it builds instead of staying quiet).
# Relative paths in the arguments are resolved by the program against the caller's directory,
# passed as -Dshale.ops.cwd; the measured engine revision goes in -Dshale.ops.revision.

# Two layouts: the source tree (scripts in ops/bin, built by Maven when needed) and the release
# package (scripts in bin, jars in lib, configuration in conf, a RELEASE file at its top).
SHALE_SCRIPT_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -f "$SHALE_SCRIPT_LIB/../../RELEASE" ]]; then
  SHALE_ROOT="$(cd "$SHALE_SCRIPT_LIB/../.." && pwd)"
  SHALE_PACKAGE=1
  SHALE_CLASSPATH="$SHALE_ROOT/lib/*"
  SHALE_CONF_DIR="$SHALE_ROOT/conf"
  SHALE_BIN_DIR="$SHALE_ROOT/bin"
else
  SHALE_ROOT="$(cd "$SHALE_SCRIPT_LIB/../../.." && pwd)"
  SHALE_PACKAGE=0
  SHALE_CLASSPATH="$SHALE_ROOT/ops/target/classes:$SHALE_ROOT/ops/target/lib/*"
  SHALE_CONF_DIR="$SHALE_ROOT/ops/config"
  SHALE_BIN_DIR="$SHALE_ROOT/ops/bin"
fi
SHALE_CALLER_DIR="$PWD"

# The server runs on Java 25 LTS (the SDK alone targets 17). Which java: the release package's own
# runtime (runtime/, made with jlink); else $JAVA_HOME, `java` on PATH, or a JDK under /usr/lib/jvm,
# the first that is 25 or newer. Sets SHALE_JAVA and SHALE_JAVA_HOME, or says what to install and
# exits.
java_major() { # the feature version a java binary reports ("25" of "25.0.1"), or nothing
  # Its home's release file says so without starting a JVM (0.1 s of every script's start).
  local release
  release="$(dirname "$(dirname "$(readlink -f "$1")")")/release"
  if [[ -f $release ]] && grep -qE '^JAVA_VERSION="[0-9]' "$release"; then
    sed -nE 's/^JAVA_VERSION="(1\.)?([0-9]+).*/\2/p' "$release"
    return 0
  fi
  "$1" -version 2>&1 | sed -nE '1s/.*version "(1\.)?([0-9]+).*/\2/p'
}
shale_find_java() {
  local candidate major
  for candidate in "$SHALE_ROOT/runtime/bin/java" "${JAVA_HOME:+$JAVA_HOME/bin/java}" \
    "$(command -v java 2> /dev/null || true)" /usr/lib/jvm/*25*/bin/java /usr/lib/jvm/*/bin/java; do
    [[ -n $candidate && -x $candidate ]] || continue
    major="$(java_major "$candidate")"
    if [[ $major =~ ^[0-9]+$ ]] && (( major >= 25 )); then
      SHALE_JAVA="$candidate"
      # Its home, links resolved (/usr/bin/java may point anywhere): a JDK when it has bin/javac.
      SHALE_JAVA_HOME="$(cd "$(dirname "$(readlink -f "$candidate")")/.." && pwd)"
      return 0
    fi
  done
  echo "${0##*/}: Shale's server needs Java 25 or newer, and none was found (JAVA_HOME, PATH," \
    "/usr/lib/jvm). Install a JDK 25, e.g. Temurin 25 from https://adoptium.net, and set" \
    "JAVA_HOME to it; Debian's OpenJDK 17 is not enough (only the client SDK runs on 17)." >&2
  exit 1
}
shale_find_java
# What every JVM here is given on 25: native libraries and Netty's Unsafe allowed, without warnings,
# and java.io opened so that the engine can advise the kernel on the descriptors it opens (ReadAdvice).
SHALE_JVM_ACCESS="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow --add-opens=java.base/java.io=ALL-UNNAMED"

# How a node's JVM starts: node_command ARGS... sets the array SHALE_NODE_COMMAND (java, options,
# class path, NodeMain, ARGS). A node runs from the release layout: the package itself, or in the
# source tree the one `mvn package` stages (ops/target/stage/shale, built below when missing): its
# own runtime/, the jars of lib/ in name order (an explicit list, so the order never depends on
# the file system), and lib/shale.aot, the ahead-of-time cache a training run made at package
# time (class loading, linking and method profiles: a warm start), used only while
# lib/shale.aot.sha256 still matches the runtime and every jar (the JVM alone does not refuse a
# cache whose jars changed; see aot_cache_usable). Heap: 512 MiB unless JAVA_OPTS names one; an
# OutOfMemoryError ends the node (a node that lost a thread to it limps on, wedged); 4 MiB G1
# regions (with the 1 MiB G1 picks for 512 MiB, every array of 512 KiB or more is "humongous": a
# 1 MiB value took two regions, and 1,000 concurrent 1 MiB puts ran 512 MiB nodes out of heap).
shale_node_home() { # prints the release layout a node runs from, or nothing
  if (( SHALE_PACKAGE )); then
    echo "$SHALE_ROOT"
    return 0
  fi
  [[ -f $SHALE_ROOT/ops/target/stage/shale/RELEASE ]] && echo "$SHALE_ROOT/ops/target/stage/shale"
  return 0
}
node_jars() { # HOME: the jars of HOME/lib in name (byte) order, as lib/NAME.jar, one a line
  local LC_ALL=C jar
  for jar in "$1"/lib/*.jar; do
    [[ -f $jar ]] && printf 'lib/%s\n' "${jar##*/}"
  done
  return 0
}
aot_cache_usable() { # HOME: whether HOME/lib/shale.aot matches its runtime and jars
  local home="$1" sums="$1/lib/shale.aot.sha256" seen
  local checked="${SHALE_AOT_CHECKED:-$home/lib/shale.aot.checked}"
  [[ -f $home/lib/shale.aot && -f $sums ]] || return 1
  # The same jars, in the same order, as when it was made, and none changed since.
  [[ "$(printf 'runtime/release\n'; node_jars "$home")" == "$(sed -E 's/^[0-9a-f]+ [ *]//' "$sums")" ]] \
    || return 1
  # Hashing the jars takes about half a second of every start, so a match is remembered in
  # lib/shale.aot.checked (or $SHALE_AOT_CHECKED where lib/ is read-only): what stat said of each
  # hashed file then (inode, size, change and modification times to the nanosecond). While stat
  # says the same, no file was rewritten or replaced (any write moves the change time, which no
  # user can set back) and nothing is hashed.
  seen="$(cd "$home" && stat -c '%i %s %z %y %n' lib/shale.aot.sha256 runtime/release $(node_jars .))" \
    || return 1
  [[ -f $checked && "$(< "$checked")" == "$seen" ]] && return 0
  (cd "$home" && sha256sum --quiet --status -c lib/shale.aot.sha256) || return 1
  # Written whole or not at all (three nodes may start at once); a read-only lib/ hashes each time.
  { printf '%s\n' "$seen" > "$checked.$$" && mv -f "$checked.$$" "$checked"; } 2> /dev/null \
    || rm -f "$checked.$$"
  return 0
}
node_command() {
  local home
  home="$(shale_node_home)"
  [[ -n $home ]] || { echo "${0##*/}: no release layout to run a node from (mvn -pl ops -am package)" >&2; exit 1; }
  local java="$home/runtime/bin/java" classpath
  [[ -x $java ]] || java="$SHALE_JAVA"
  classpath="$(node_jars "$home" | sed "s|^|$home/|" | paste -sd: -)"
  local heap="-Xmx512m"
  [[ "${JAVA_OPTS:-}" == *-Xmx* ]] && heap=""
  SHALE_NODE_COMMAND=("$java" $SHALE_JVM_ACCESS -XX:+ExitOnOutOfMemoryError -XX:G1HeapRegionSize=4m $heap)
  if aot_cache_usable "$home"; then
    SHALE_NODE_COMMAND+=("-XX:AOTCache=$home/lib/shale.aot")
  elif [[ -f $home/lib/shale.aot ]]; then
    echo "${0##*/}: not using $home/lib/shale.aot: it was made for other jars or another runtime" \
      "(rebuild with mvn package); the node starts without it, slower to warm" >&2
  fi
  # shellcheck disable=SC2206  # JAVA_OPTS is a list of options
  # SHALE_NODE_EXTRA_CLASSPATH goes after the jars (the image's logging configuration): a class
  # path that extends the one the cache was made for keeps the cache.
  classpath+="${SHALE_NODE_EXTRA_CLASSPATH:+:$SHALE_NODE_EXTRA_CLASSPATH}"
  SHALE_NODE_COMMAND+=(${JAVA_OPTS:-} -Dshale.ops.cwd="$SHALE_CALLER_DIR" -cp "$classpath" io.shale.node.server.NodeMain "$@")
}

ops_needs_build() {
  (( SHALE_PACKAGE )) && return 1 # a release package is built already
  local stamp="$SHALE_ROOT/ops/target/.ops-tools-built"
  [[ -f "$SHALE_ROOT/ops/target/classes/io/shale/ops/cli/Shalectl.class" && -f $stamp ]] || return 0
  compgen -G "$SHALE_ROOT/ops/target/lib/*.jar" > /dev/null || return 0
  [[ -n "$(shale_node_home)" ]] || return 0 # the release layout nodes run from
  [[ -n "$(cd "$SHALE_ROOT" && find pom.xml ./*/pom.xml ./*/src/main -newer "$stamp" -print -quit 2> /dev/null)" ]]
}

ops_build_if_needed() {
  local script="${0##*/}"
  if [[ "${SHALE_SKIP_BUILD:-0}" == 1 ]] || ! ops_needs_build; then
    return 0
  fi
  command -v mvn > /dev/null || { echo "$script: mvn (Maven 3.8+) is needed to build" >&2; exit 1; }
  # Maven runs on the JDK of the java found above (the build needs 25's javac).
  [[ -x $SHALE_JAVA_HOME/bin/javac ]] \
    || { echo "$script: building needs a JDK 25 (javac); $SHALE_JAVA_HOME has none" >&2; exit 1; }
  export JAVA_HOME="$SHALE_JAVA_HOME"
  echo "$script: building (mvn -q -pl ops -am package -DskipTests) ..." >&2
  mkdir -p "$SHALE_ROOT/ops/target"
  # Taken before the build: a source edited during the build is newer, so the next run rebuilds.
  local started
  started="$(mktemp "$SHALE_ROOT/ops/target/.ops-tools-build.XXXXXX")"
  local ok=1
  if [[ "${SHALE_BUILD_PROGRESS:-0}" == 1 ]]; then
    # One line per module instead of Maven's output, which goes to a log shown if it fails.
    local log="$SHALE_ROOT/ops/target/build.log"
    (cd "$SHALE_ROOT" && mvn -B -ntp -pl ops -am package -DskipTests) 2>&1 | tee "$log" \
      | sed -unE 's/^\[INFO\] Building (Shale [^ ]+) .*/      building \1 .../p' || true
    grep -q '^\[INFO\] BUILD SUCCESS' "$log" || { tail -n 40 "$log" >&2; ok=0; }
  else
    (cd "$SHALE_ROOT" && mvn -q -pl ops -am package -DskipTests) || ok=0
  fi
  if (( ! ok )); then
    rm -f "$started"
    echo "$script: the build failed" >&2
    exit 1
  fi
  mv "$started" "$SHALE_ROOT/ops/target/.ops-tools-built"
}

ops_revision() {
  # Reports name the engine revision they measured.
  if (( SHALE_PACKAGE )); then
    sed -n 's/^commit=//p' "$SHALE_ROOT/RELEASE"
    return 0
  fi
  local revision
  revision="$(git -C "$SHALE_ROOT" rev-parse --short HEAD 2> /dev/null || echo unknown)"
  if [[ -n "$(git -C "$SHALE_ROOT" status --porcelain -- storage-engine 2> /dev/null)" ]]; then
    revision+=" with uncommitted storage-engine changes"
  fi
  echo "$revision"
}

ops_java() {
  local main_class="$1"
  shift
  # shellcheck disable=SC2086  # JAVA_OPTS is a list of options
  (cd "$SHALE_ROOT" && "$SHALE_JAVA" $SHALE_JVM_ACCESS ${JAVA_OPTS:-} -Dshale.ops.cwd="$SHALE_CALLER_DIR" \
    -Dshale.ops.revision="$(ops_revision)" \
    -cp "$SHALE_CLASSPATH" "$main_class" "$@")
}

ops_print_version() { # NAME: prints "NAME VERSION (commit COMMIT)", as stamped at package time
  ops_build_if_needed
  exec "$SHALE_JAVA" -cp "$SHALE_CLASSPATH" io.shale.node.server.ReleaseVersion "$1"
}

run_ops_main() {
  local main_class="$1"
  shift
  # Every script answers --version alike (shalectl and shale-node in Java, the rest here).
  if [[ ${1:-} == --version && $main_class != io.shale.ops.cli.Shalectl ]]; then
    ops_print_version "${0##*/}"
  fi
  ops_build_if_needed
  cd "$SHALE_ROOT"
  # shellcheck disable=SC2086  # JAVA_OPTS is a list of options
  # Benchmarks start their nodes from the release layout, as shale-node does (shale.node.home).
  exec "$SHALE_JAVA" $SHALE_JVM_ACCESS ${JAVA_OPTS:-} -Dshale.ops.cwd="$SHALE_CALLER_DIR" \
    -Dshale.ops.revision="$(ops_revision)" -Dshale.node.home="$(shale_node_home)" \
    -cp "$SHALE_CLASSPATH" "$main_class" "$@"
}
