#!/bin/sh
# A match between two dodgem engines refereed by kz04px's cutegames (the
# generic UGI referee) on every board size from 3 x 3 to 8 x 8.
#
# usage: tools/cutegames/match.sh CUTEGAMES ENGINE1 ENGINE2 [GAMES [TIME_MS [INC_MS [OUT_DIR]]]]
#
# ENGINE1 and ENGINE2 are `dodgem` binaries (the same one twice is fine;
# ENGINE2 then plays at `Skill Level` $LEVEL2, default 20). For each size
# it writes random openings (openings.py), a cutegames settings file and
# the games' PGN into OUT_DIR, and prints cutegames' score line and any
# adjudication (timeouts, crashes, mismatched results).
set -eu
CG=$1; E1=$(realpath "$2"); E2=$(realpath "$3")
GAMES=${4:-20}; TIME=${5:-1000}; INC=${6:-10}; OUT=${7:-cutegames-out}
LEVEL2=${LEVEL2:-20}
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUT"
cd "$OUT"
for n in 3 4 5 6 7 8; do
  plies=$(( n < 5 ? 2 : n - 1 ))
  python3 "$HERE/openings.py" "$E1" "$n" 10 "$plies" "$n" > "openings-$n.txt"
  cat > "settings-$n.json" <<JSON
{
  "game": "generic", "games": $GAMES, "concurrency": 1, "ratinginterval": 1000,
  "tournament": "roundrobin",
  "protocol": { "askturn": true, "gameover": "both" },
  "openings": { "path": "openings-$n.txt", "repeat": true, "shuffle": false },
  "adjudication": { "timeoutbuffer": 0, "maxfullmoves": 100000 },
  "timecontrol": { "type": "clock", "time": $TIME, "increment": $INC },
  "options": { "BoardSize": "$n" },
  "pgn": { "enabled": true, "verbose": true, "override": true, "colour1": "Black",
           "colour2": "White", "path": "games-$n.pgn", "event": "dodgem ${n}x${n}" },
  "engines": [
    { "name": "engine1", "path": "$E1", "protocol": "UGI" },
    { "name": "engine2", "path": "$E2", "protocol": "UGI", "options": { "Skill Level": "$LEVEL2" } }
  ]
}
JSON
  echo "== ${n}x${n}: $GAMES games at ${TIME}+${INC} ms"
  "$CG" --settings "settings-$n.json" > "cutegames-$n.log" 2>&1
  grep -E "^Score of" "cutegames-$n.log" | tail -1
  grep -E "^Games finished" "cutegames-$n.log" || true
  echo "adjudicated games: $(grep -c "^\[Adjudicated" "games-$n.pgn" || true)"
  grep "^\[Adjudicated" "games-$n.pgn" | sort | uniq -c || true
done
