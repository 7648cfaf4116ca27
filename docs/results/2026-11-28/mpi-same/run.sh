#!/bin/bash
# Files of an MPI solve against a solve in one process, several rank counts.
set -u
B=/work/bin/dodgem-mpi
M="mpirun --allow-run-as-root --oversubscribe -n"
for kind in "5 textbook 4" "5 classic 4" "7 classic 3" "8 textbook 3"; do
  set -- $kind; size=$1 rules=$2 cars=$3
  name=$size-$rules-k$cars
  rm -rf one-$name; /usr/bin/time -f "one: %e s wall %U s user %M KB" $B solve --size $size --rules $rules --max-cars $cars --out one-$name --threads 2 --quiet > one-$name.out 2> one-$name.err
  for n in 2 3 4; do
    rm -rf mpi$n-$name
    /usr/bin/time -f "mpi -n $n: %e s wall %U s user" $M $n $B solve --mpi --size $size --rules $rules --max-cars $cars --out mpi$n-$name --threads 1 --quiet > mpi$n-$name.out 2> mpi$n-$name.err
    if diff -r one-$name mpi$n-$name > /dev/null; then same=same; else same=DIFFERENT; fi
    echo "$name ranks $n: $(ls mpi$n-$name | wc -l) files, $(du -sb mpi$n-$name | cut -f1) bytes: $same as one process ($(tail -1 mpi$n-$name.err); $(tail -1 one-$name.err))"
    rm -rf mpi$n-$name
  done
  rm -rf one-$name
done
