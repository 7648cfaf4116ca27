#!/bin/sh
# The soak run recorded in docs/tests.md: a long referee match and protocol
# storms at the same time, at nice 10. Usage:
#   cargo build --release && tests/soak/run.sh [binary] [output directory]
# Writes soak.log (timings, engine memory, processes left behind),
# match.out/.pgn/.json and storms.out in the output directory.
set -u
B=$(realpath "${1:-target/release/dodgem}")
OUT=${2:-target/soak}
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUT" && cd "$OUT" || exit 1
"$B" solve --size 3 --rules classic --out 3x3-classic --quiet > /dev/null 2>&1
date -u +"start %H:%M:%S" > soak.log
nice -n 10 "$B" match --engine1 "$B" --engine2 "$B" --games 300 --size 5 --random-plies 4 \
  --seed 7 --tc 0.5+0.05 --pgn match.pgn --results match.json > match.out 2> match.err &
M=$!
# The match engines' memory: at the start, and the last sample before the
# match ends.
(
  sleep 5
  for p in $(pgrep -P $M); do echo "engine $p start $(grep VmRSS /proc/$p/status)"; done >> soak.log
  while kill -0 $M 2>/dev/null; do
    for p in $(pgrep -P $M); do
      echo "$(date -u +%H:%M:%S) engine $p $(grep VmRSS /proc/$p/status)"
    done > last_rss.tmp
    [ -s last_rss.tmp ] && mv last_rss.tmp last_rss.txt
    sleep 5
  done
) &
for seed in 1 2 3; do
  nice -n 10 python3 "$HERE/storm.py" "$B" 150 $seed "$PWD/3x3-classic" >> storms.out 2>&1
done
wait $M
echo "match exit $?" >> soak.log
sleep 6
echo "last sample:" >> soak.log
cat last_rss.txt >> soak.log
date -u +"end %H:%M:%S" >> soak.log
echo "processes of $B left behind:" >> soak.log
ps -eo pid,ppid,etime,args | awk -v b="$B" '$4 == b' >> soak.log
echo "done" >> soak.log
