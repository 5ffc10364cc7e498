#!/bin/sh
# One SCHED_IDLE "build" worker of scripts/bench's schedidle experiment:
# JOBS times, fork+exec a CPU-bound busybox shell loop of LOOP iterations
# (the compiler), then sleep 10 ms (the make bookkeeping and I/O).
#   sh si-worker.sh JOBS LOOP
j=0
while [ "$j" -lt "$1" ]; do
	sh -c 'i=0; while [ $i -lt '"$2"' ]; do i=$((i + 1)); done' || exit 1
	sleep 0.01
	j=$((j + 1))
done
