#!/usr/bin/env bash
# Builds one of the image's variants (docker/Dockerfile's EXTRAS) from wheels made here, so the build
# itself needs no package index:
#   docker/build.sh [VARIANT] [TAG]
#     latest    (default) toolbench-gym:latest    the package alone (what make docker builds)
#     ray       toolbench-gym:ray       and ray[default,client]: a Ray head or node, `ray list`, ray://
#     openenv   toolbench-gym:openenv   and openenv-core, skyrl-gym, verifiers (no torch, no trl)
# The wheels go to build/docker/ (latest) or build/docker-VARIANT/; the base image is made by
# docker/build-base.sh where it is missing. PYTHON (default .venv/bin/python) must be the image's
# Python, 3.11 (Debian bookworm's): the wheels are built for it.
set -euo pipefail
cd "$(dirname "$0")/.."
variant="${1:-latest}"
case "$variant" in
  latest) extras="" ;;
  ray) extras="ray" ;;
  openenv) extras="openenv,skyrl,verifiers" ;;
  *) echo "unknown variant '$variant': latest, ray or openenv" >&2; exit 2 ;;
esac
tag="${2:-toolbench-gym:$variant}"
python="${PYTHON:-.venv/bin/python}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "$python is not Python 3.11, the image's: its wheels would not install there" >&2
  exit 2
fi
context="build/docker${extras:+-$variant}"
rm -rf "$context" && mkdir -p "$context"
"$python" -m pip wheel --quiet ".${extras:+[$extras]}" --wheel-dir "$context/wheels"
docker/build-base.sh
docker build --file docker/Dockerfile --build-arg EXTRAS="$extras" --tag "$tag" "$context"
