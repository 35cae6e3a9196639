# Entry 158 in one call: the A/B (ab.sh) first, then the GPU checks (tests.sh) in what is
# left of the call (LIMIT seconds in all).
set -u
t0=$(date +%s)
LIMIT=${AB_LIMIT:-330} ROUNDS=${ROUNDS:-2} bash docs/bench/entry158/ab.sh
left=$(( ${LIMIT:-570} - ($(date +%s) - t0) ))
echo "tests get $left s"
T=$(( left - 60 )) bash docs/bench/entry158/tests.sh
