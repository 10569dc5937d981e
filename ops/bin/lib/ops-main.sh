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

ops_needs_build() {
  (( SHALE_PACKAGE )) && return 1 # a release package is built already
  local stamp="$SHALE_ROOT/ops/target/.ops-tools-built"
  [[ -f "$SHALE_ROOT/ops/target/classes/io/shale/ops/cli/Shalectl.class" && -f $stamp ]] || return 0
  compgen -G "$SHALE_ROOT/ops/target/lib/*.jar" > /dev/null || return 0
  [[ -n "$(cd "$SHALE_ROOT" && find pom.xml ./*/pom.xml ./*/src/main -newer "$stamp" -print -quit 2> /dev/null)" ]]
}

ops_build_if_needed() {
  local script="${0##*/}"
  if [[ "${SHALE_SKIP_BUILD:-0}" == 1 ]] || ! ops_needs_build; then
    return 0
  fi
  command -v mvn > /dev/null || { echo "$script: mvn (Maven 3.8+) is needed to build" >&2; exit 1; }
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
  (cd "$SHALE_ROOT" && java ${JAVA_OPTS:-} -Dshale.ops.cwd="$SHALE_CALLER_DIR" \
    -Dshale.ops.revision="$(ops_revision)" \
    -cp "$SHALE_CLASSPATH" "$main_class" "$@")
}

ops_print_version() { # NAME: prints "NAME VERSION (commit COMMIT)", as stamped at package time
  ops_build_if_needed
  exec java -cp "$SHALE_CLASSPATH" io.shale.node.server.ReleaseVersion "$1"
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
  exec java ${JAVA_OPTS:-} -Dshale.ops.cwd="$SHALE_CALLER_DIR" -Dshale.ops.revision="$(ops_revision)" \
    -cp "$SHALE_CLASSPATH" "$main_class" "$@"
}
