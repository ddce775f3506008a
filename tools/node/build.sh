#!/usr/bin/env bash
# Builds the node's own programs (pause/: a pod sandbox's first process, our own, no dependencies) into a cache
# outside the clone:
#   ${BINDING_SCHEDULER_CACHE:-~/.cache/binding-scheduler}/node/<hash>-<go>/
# and prints that directory; <hash> is the first 12 hex digits of the sha256 of the sources (pause's go.mod and
# .go files, and this script), so a change builds anew and an unchanged source is never rebuilt. Static
# (CGO off): the image scripts/binary_image.py makes of it holds nothing else. Seconds.
set -euo pipefail
cd "$(dirname "$0")"
gov=$(go env GOVERSION)
hash=$(for f in build.sh pause/go.mod $(LC_ALL=C ls -- pause/*.go); do printf '%s\0' "$f"; cat -- "$f"; done \
       | sha256sum | cut -c1-12)
out="${BINDING_SCHEDULER_CACHE:-$HOME/.cache/binding-scheduler}/node/${hash}-${gov}"
if [[ ! -x "$out/pause" ]]; then
  echo "node: building pause into $out" >&2
  mkdir -p "$out"
  tmp="$out/pause.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  (cd pause && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp" .)
  mv "$tmp" "$out/pause"
  trap - EXIT
fi
echo "$out"
