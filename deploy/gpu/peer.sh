#!/usr/bin/env bash
# The authors' PyTorch trainer, timed: runs torch_peer.py with the first
# Python that has torch, and prints its one JSON object on stdout.
#
#   deploy/gpu/peer.sh [torch_peer.py flags...]
#     e.g. deploy/gpu/peer.sh --device cuda --steps 20 --max-seconds 120
#          deploy/gpu/peer.sh --device cpu --config tiny --steps 2 --batch 4 --micro-batches 1
#
# Their code must be in deploy/gpu/peer/AFINs (git-ignored): fill it with
#   deploy/gpu/fetch_peer.sh /work/.mirror/joohwanko+AFINs
# and name deploy/gpu/peer/AFINs in the device call's carry. PEER_PYTHON
# picks the interpreter. Exit 2: no Python with torch or no peer code;
# exit 3: their trainer ran out of memory (the JSON says so).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

[ -f "$here/peer/AFINs/src/afin/train.py" ] || [[ " $* " == *" --src "* ]] ||
  { echo "peer.sh: no authors' code in $here/peer/AFINs (run deploy/gpu/fetch_peer.sh MIRROR_GIT_DIR)" >&2; exit 2; }

py=
for c in ${PEER_PYTHON:-} python3 /usr/bin/python3 python; do
  command -v "$c" >/dev/null 2>&1 || continue
  if "$c" -c 'import torch' >/dev/null 2>&1; then py=$c; break; fi
done
[ -n "$py" ] || { echo "peer.sh: no Python with torch (set PEER_PYTHON, or apt-get install python3-torch)" >&2; exit 2; }
exec "$py" "$here/torch_peer.py" "$@"
