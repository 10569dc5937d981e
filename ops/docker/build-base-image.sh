#!/usr/bin/env bash
# Builds shale/base:local, a minimal Debian bookworm image (the node image brings its own Java 25
# runtime, ops/target/runtime), without any container registry: debootstrap fetches the packages from the Debian mirror apt already uses, and
# `docker import` turns the tree into an image. Skips the work when the image exists (--force
# rebuilds). iptables is included for the network partitions of the nemesis tests. About a
# minute; needs root, debootstrap and a running Docker engine.
#   ops/docker/build-base-image.sh [--force] [--tag TAG]
set -euo pipefail
TAG="shale/base:local"
FORCE=0
while (( $# )); do
  case "$1" in
    --force) FORCE=1; shift ;;
    --tag) TAG="$2"; shift 2 ;;
    *) echo "usage: $0 [--force] [--tag TAG]" >&2; exit 2 ;;
  esac
done
say() { printf 'build-base-image: %s\n' "$*"; }

# shellcheck source=lib/debootstrap-image.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debootstrap-image.sh"
image_checks
if (( ! FORCE )) && docker image inspect "$TAG" > /dev/null 2>&1; then
  # iptables is there for the partition faults of the nemesis tests (cluster-tests); an image
  # built before it was added is rebuilt.
  if docker run --rm --entrypoint /bin/sh "$TAG" -c 'command -v iptables' > /dev/null 2>&1; then
    say "$TAG exists; nothing to do (--force rebuilds)"
    exit 0
  fi
  say "$TAG exists but has no iptables (needed by the partition tests): rebuilding"
fi
image_requirements

MIRROR="$(debian_mirror)"

ROOTFS="$(mktemp -d /tmp/shale-base-rootfs.XXXXXX)"
trap 'rm -rf "$ROOTFS"' EXIT
start=$SECONDS
say "debootstrap bookworm (minbase + iptables) from $MIRROR ..."
debootstrap --variant=minbase --include=iptables bookworm "$ROOTFS" "$MIRROR" \
  > "$ROOTFS.log" 2>&1 || { tail -n 30 "$ROOTFS.log" >&2; say "debootstrap failed (log above)"; exit 1; }
rm -f "$ROOTFS.log"
# What a runtime image does not need.
rm -rf "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* \
  "$ROOTFS"/usr/share/locale/* "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
say "importing as $TAG ..."
tar -C "$ROOTFS" --numeric-owner -c . | docker import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'ENV LANG=C.UTF-8' - "$TAG" > /dev/null
say "$TAG built in $((SECONDS - start)) s ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%d MB", $1/1000000}'))"
