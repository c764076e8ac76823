#!/bin/sh
# The security suite again, every case run as a job of a Python fork server
# (`crucible run --fork-server`): a job's isolation is made by the zygote, not by a fresh
# sandbox's init, so it must hold against the same hostile programs (issue 14).
exec env CRUCIBLE_SEC_RUN=--fork-server "$(dirname "$0")/run.t"
