#!/usr/bin/env bash
# Makes the Dockerfile's base image from Debian's own packages, for a machine that reaches Debian's
# mirror but no image registry: mmdebstrap writes a minimal bookworm with Python into a tarball, and
# `docker import` tags it with the name the Dockerfile's FROM uses, so the same Dockerfile builds
# here and where the registry's image is pulled.
#   docker/build-base.sh [IMAGE]     (default debian:bookworm-slim; needs root, mmdebstrap, docker)
set -euo pipefail
image="${1:-debian:bookworm-slim}"
if docker image inspect "$image" >/dev/null 2>&1; then
  echo "$image is already here (docker rmi $image to make it again)"
  exit 0
fi
tarball="$(mktemp -d)/base.tar"
trap 'rm -rf "$(dirname "$tarball")"' EXIT
# python3-venv brings ensurepip (the image's venv needs pip); libseccomp2 is the sandbox's seccomp layer.
mmdebstrap --variant=minbase --include=python3,python3-venv,libseccomp2 bookworm "$tarball"
docker import "$tarball" "$image"
