#!/usr/bin/env bash
# Builds shale/prometheus:local, Prometheus from Debian bookworm's package, without any container
# registry (as build-base-image.sh builds the Java runtime): debootstrap fetches the packages from
# the mirror apt already uses and `docker import` turns the tree into an image whose entrypoint is
# prometheus, like the public image's, so docker-compose.yml runs either
# (SHALE_PROMETHEUS_IMAGE=shale/prometheus:local). Skips the work when the image exists (--force
# rebuilds). About a minute; needs root, debootstrap and a running Docker engine.
#   ops/docker/build-prometheus-image.sh [--force] [--tag TAG]
set -euo pipefail
TAG="shale/prometheus:local"
FORCE=0
while (( $# )); do
  case "$1" in
    --force) FORCE=1; shift ;;
    --tag) TAG="$2"; shift 2 ;;
    *) echo "usage: $0 [--force] [--tag TAG]" >&2; exit 2 ;;
  esac
done
say() { printf 'build-prometheus-image: %s\n' "$*"; }

# shellcheck source=lib/debootstrap-image.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debootstrap-image.sh"
image_checks
if (( ! FORCE )) && docker image inspect "$TAG" > /dev/null 2>&1; then
  say "$TAG exists; nothing to do (--force rebuilds)"
  exit 0
fi
image_requirements

MIRROR="$(debian_mirror)"

ROOTFS="$(mktemp -d /tmp/shale-prometheus-rootfs.XXXXXX)"
trap 'rm -rf "$ROOTFS"' EXIT
start=$SECONDS
say "debootstrap bookworm (minbase + prometheus) from $MIRROR ..."
debootstrap --variant=minbase --include=prometheus bookworm "$ROOTFS" "$MIRROR" \
  > "$ROOTFS.log" 2>&1 || { tail -n 30 "$ROOTFS.log" >&2; say "debootstrap failed (log above)"; exit 1; }
rm -f "$ROOTFS.log"
# The TSDB lives in /prometheus (the public image's path), owned by the package's user.
mkdir -p "$ROOTFS/prometheus"
chroot "$ROOTFS" chown prometheus:prometheus /prometheus
rm -rf "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* \
  "$ROOTFS"/usr/share/locale/* "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
say "importing as $TAG ..."
tar -C "$ROOTFS" --numeric-owner -c . | docker import \
  -c 'USER prometheus' \
  -c 'WORKDIR /prometheus' \
  -c 'EXPOSE 9090' \
  -c 'ENTRYPOINT ["/usr/bin/prometheus", "--storage.tsdb.path=/prometheus"]' \
  -c 'CMD ["--config.file=/etc/prometheus/prometheus.yml"]' - "$TAG" > /dev/null
say "$TAG built in $((SECONDS - start)) s ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%d MB", $1/1000000}'); $(docker run --rm "$TAG" --version 2>&1 | head -1))"
