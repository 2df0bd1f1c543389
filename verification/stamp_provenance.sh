#!/usr/bin/env bash
# Writes the provenance of this working tree for a copy without its .git (the GPU machine):
# DIR/commit (short commit id) and DIR/tree.diff (git diff --binary HEAD plus untracked, not ignored
# files as new-file diffs). Configure the copy with -DBLOCKRES_PROVENANCE_DIR=DIR; its reports then
# carry this commit and the diff's SHA-256 (cmake/write_version.cmake).
#   usage: verification/stamp_provenance.sh [DIR]   (default .gpu-carry/provenance)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.gpu-carry/provenance}
mkdir -p "$dir"
git rev-parse --short=12 HEAD > "$dir/commit"
{
  git diff --binary HEAD
  git ls-files --others --exclude-standard -z | while IFS= read -r -d '' f; do
    git diff --binary --no-index /dev/null "$f" || true
  done
} > "$dir/tree.diff"
echo "provenance: $(cat "$dir/commit"), diff of $(wc -c < "$dir/tree.diff") bytes in $dir"
