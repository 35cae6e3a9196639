# Entry 156 in one call: the GPU checks (tests.sh) first, then the A/B (ab.sh) in what
# is left of the call (LIMIT seconds in all), ROUNDS rounds (default 2).
set -u
t0=$(date +%s)
T=${T:-150} bash docs/bench/entry156/tests.sh
left=$(( ${LIMIT:-560} - ($(date +%s) - t0) ))
echo "A/B gets $left s"
LIMIT=$left ROUNDS=${ROUNDS:-2} bash docs/bench/entry156/ab.sh
