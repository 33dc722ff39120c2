#!/bin/sh
# An llvm-symbolizer that does not answer (as one stuck on a network lookup
# or a lock): the crash report must not wait for it.
exec sleep 30
