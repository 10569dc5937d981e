# Sourced by the ops/docker/build-*-image.sh scripts: what building an image from Debian packages
# without a registry needs (debootstrap into a directory, then `docker import`).
#   image_checks                exits 1 without docker or a Docker engine that answers
#   image_requirements          exits 1 without debootstrap or root
#   debian_mirror               prints the mirror apt already uses (deb822 sources first, then
#                               the classic list; deb.debian.org otherwise)
# The caller defines say().

image_checks() {
  command -v docker > /dev/null || { say "docker is not installed (apt-get install docker.io)"; exit 1; }
  docker info > /dev/null 2>&1 || { say "no Docker engine answers (start dockerd)"; exit 1; }
}

image_requirements() {
  command -v debootstrap > /dev/null || { say "debootstrap is not installed (apt-get install debootstrap)"; exit 1; }
  [[ $(id -u) -eq 0 ]] || { say "debootstrap needs root"; exit 1; }
}

debian_mirror() {
  local mirror=""
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    mirror="$(sed -nE 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p' /etc/apt/sources.list.d/debian.sources | head -1)"
  fi
  if [[ -z $mirror && -f /etc/apt/sources.list ]]; then
    mirror="$(sed -nE 's/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+[a-z]+[[:space:]]+main.*/\2/p' /etc/apt/sources.list | head -1)"
  fi
  printf '%s\n' "${mirror:-http://deb.debian.org/debian}"
}
