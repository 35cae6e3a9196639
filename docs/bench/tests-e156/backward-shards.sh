# The backward GPU program in seven shards of four cases side by side (doctest -f/-l: the
# 1-based range of the cases passing the filters), after run.sh's build on the same
# machine: run.sh's ctest reached every other GPU test in its time, not this one.
export CC1D_TEST_CACHE_DIR=/tmp/tc
for f in 1 5 9 13 17 21 25; do
  ( timeout 270 build/tests/gpu_test_backward -f=$f -l=$((f+3)) > $OUT/bwd-$f.txt 2>&1; echo "rc $?" >> $OUT/bwd-$f.txt ) &
done
wait
for f in 1 5 9 13 17 21 25; do echo "== $f"; grep -E 'test cases:|assertions:|FAILED|ERROR' $OUT/bwd-$f.txt | head -4; tail -n1 $OUT/bwd-$f.txt; done
