#!/usr/bin/env bash
# Puts the authors' PyTorch package (joohwanko/AFINs, src/afin) into the
# git-ignored folder deploy/gpu/peer/AFINs/, where torch_peer.py imports it.
# Their code is never committed here: it travels to the GPU machine as an
# ignored path named in the device call's carry.
#
#   deploy/gpu/fetch_peer.sh MIRROR [DEST]
#
# MIRROR is a bare git directory of joohwanko/AFINs (or a folder holding
# one as repo/, as a fetched mirror is laid out), or a plain checkout.
# DEST defaults to deploy/gpu/peer/AFINs next to this script.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: fetch_peer.sh MIRROR_GIT_DIR [DEST]" >&2; exit 2; }
src=$1
here=$(cd "$(dirname "$0")" && pwd)
dest=${2:-$here/peer/AFINs}

if [ -d "$src/repo" ] && [ ! -d "$src/objects" ]; then src=$src/repo; fi
if [ -d "$src/.git" ]; then src=$src/.git; fi
git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null ||
  { echo "fetch_peer.sh: $1 is not a git directory with a HEAD" >&2; exit 2; }
git --git-dir="$src" cat-file -e HEAD:src/afin/train.py 2>/dev/null ||
  { echo "fetch_peer.sh: $1 has no src/afin/train.py at HEAD (not joohwanko/AFINs?)" >&2; exit 2; }

rm -rf "$dest.part"
mkdir -p "$dest.part"
# Only src/: the repository's large demo assets are not needed (and a
# mirror may list them without their objects).
git --git-dir="$src" archive HEAD src | tar -x -C "$dest.part"
git --git-dir="$src" rev-parse HEAD >"$dest.part/REVISION"
rm -rf "$dest"
mv "$dest.part" "$dest"
echo "fetch_peer.sh: $(cat "$dest/REVISION") -> $dest" >&2
