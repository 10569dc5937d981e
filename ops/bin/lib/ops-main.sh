# Sourced by the ops/bin scripts: run_ops_main CLASS ARGS... builds ops (and the modules it
# depends on) when needed, with
#   mvn -q -pl ops -am package -DskipTests
# (when the build is missing or a pom or main source file is newer than the last build), then
# execs Java on CLASS from the repository root.
# Environment: JAVA_OPTS (extra JVM options), SHALE_SKIP_BUILD=1 (never build).
# Relative paths in the arguments are resolved by the program against the caller's directory,
# passed as -Dshale.ops.cwd; the measured engine revision goes in -Dshale.ops.revision.

run_ops_main() {
  local main_class="$1"
  shift
  local script="${0##*/}"
  local caller_dir="$PWD"
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
  cd "$root"

  local stamp=ops/target/.ops-tools-built
  local class_file="ops/target/classes/${main_class//.//}.class"
  needs_build() {
    [[ -f $class_file && -f $stamp ]] || return 0
    compgen -G 'ops/target/lib/*.jar' > /dev/null || return 0
    [[ -n "$(find pom.xml ./*/pom.xml ./*/src/main -newer "$stamp" -print -quit 2> /dev/null)" ]]
  }
  if [[ "${SHALE_SKIP_BUILD:-0}" != 1 ]] && needs_build; then
    command -v mvn > /dev/null || { echo "$script: mvn (Maven 3.8+) is needed to build" >&2; exit 1; }
    echo "$script: building (mvn -q -pl ops -am package -DskipTests) ..." >&2
    mkdir -p ops/target
    # Taken before the build: a source edited during the build is newer, so the next run rebuilds.
    local started
    started="$(mktemp ops/target/.ops-tools-build.XXXXXX)"
    if ! mvn -q -pl ops -am package -DskipTests; then
      rm -f "$started"
      echo "$script: the build failed" >&2
      exit 1
    fi
    mv "$started" "$stamp"
  fi
  # Reports name the engine revision they measured.
  local revision
  revision="$(git rev-parse --short HEAD 2> /dev/null || echo unknown)"
  if [[ -n "$(git status --porcelain -- storage-engine 2> /dev/null)" ]]; then
    revision+=" with uncommitted storage-engine changes"
  fi
  # shellcheck disable=SC2086  # JAVA_OPTS is a list of options
  exec java ${JAVA_OPTS:-} -Dshale.ops.cwd="$caller_dir" -Dshale.ops.revision="$revision" \
    -cp 'ops/target/classes:ops/target/lib/*' "$main_class" "$@"
}
