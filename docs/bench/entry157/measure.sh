# Entry 157: what NVRTC 13.0's --Ofast-compile levels do to cold compiles (build host,
# no GPU). The option is given through a temporary line in src/rtc/nvrtc.cpp's
# with_phase_timing (never committed):
#     if (auto extra = env::get("CC1D_TMP_EXTRA")) options.push_back(*extra);
# then cc1d-precompile rebuilt. Every compile is cold (empty cache, no driver cache).
set -u
cd "$(dirname "$0")/../../.."
for opt in "" "--Ofast-compile=min" "--Ofast-compile=mid" "--Ofast-compile=max"; do
  for r in 1 2 3; do   # the five slowest kinds of module, three times each
    rm -rf /tmp/pcx
    echo "$opt|$(CUDA_CACHE_DISABLE=1 CC1D_TMP_EXTRA="$opt" build/tools/cc1d-precompile --config docs/bench/entry157/slow-modules.json \
      --cache-dir /tmp/pcx --jobs 1 2>&1 | grep -o 'compiled [0-9.]* s' | awk '{print $2}' | paste -sd' ')"
  done
done
for opt in "" "--Ofast-compile=min" "--Ofast-compile=mid"; do   # the default set, once each
  tag=${opt#--Ofast-compile=}; tag=${tag:-default}
  rm -rf /tmp/pcw
  CUDA_CACHE_DISABLE=1 CC1D_TMP_EXTRA="$opt" build/tools/cc1d-precompile --config configs/precompile/mamba.json --target sm_90 \
    --cache-dir /tmp/pcw --jobs 1 > docs/bench/entry157/set-$tag.log 2>&1
  rm -rf /tmp/ofc-$tag
  CUDA_CACHE_DISABLE=1 CC1D_TMP_EXTRA="$opt" build/tools/cc1d-precompile --config docs/bench/entry157/slow-modules.json \
    --cache-dir /tmp/ofc-$tag --jobs 1 > /dev/null 2>&1
  echo "== $tag"; python3 docs/bench/entry157/cubin_info.py /tmp/ofc-$tag | grep -v reduce
done
