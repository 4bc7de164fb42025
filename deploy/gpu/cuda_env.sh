# Sourced, not run: sets up GoMLX's XLA backend on a CUDA GPU for the
# scripts beside it (run.sh, bench.sh).
#
#   . deploy/gpu/cuda_env.sh && afin_cuda_env || exit 2
#
# afin_cuda_env finds a PJRT CUDA plugin: the xla_cuda_plugin.so of the
# Python package jax-cuda13-pjrt (or jax-cuda12-pjrt), with the NVIDIA
# libraries of the same Python environment (the nvidia-* wheels), or
# $PJRT_PLUGIN when set. It exports GOMLX_BACKEND=xla:<plugin> and
# LD_LIBRARY_PATH with those libraries, or says on stderr why not and
# returns 1 (changing nothing).

afin_find_plugin() {
  if [ -n "${PJRT_PLUGIN:-}" ]; then echo "$PJRT_PLUGIN"; return; fi
  local py site d f
  for py in python3 python; do
    command -v "$py" >/dev/null || continue
    site=$("$py" -c 'import site,sys; print("\n".join(site.getsitepackages()+[site.getusersitepackages()]))' 2>/dev/null) || continue
    for d in $site; do
      for f in "$d"/jax_plugins/xla_cuda*/xla_cuda_plugin.so; do
        [ -f "$f" ] && { echo "$f"; return; }
      done
    done
  done
  return 1
}

afin_cuda_env() {
  local plugin site lib
  plugin=$(afin_find_plugin) || { echo "no PJRT CUDA plugin found (pip install jax-cuda13-pjrt, or set PJRT_PLUGIN=/abs/path/xla_cuda_plugin.so)" >&2; return 1; }
  [ -f "$plugin" ] || { echo "PJRT plugin $plugin is not a file" >&2; return 1; }
  plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
  site=$(dirname "$(dirname "$(dirname "$plugin")")")
  # The plugin loads the CUDA libraries of its own Python environment.
  for lib in "$site"/nvidia/*/lib; do
    [ -d "$lib" ] && LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  done
  export LD_LIBRARY_PATH
  export GOMLX_BACKEND="xla:$plugin"
}
