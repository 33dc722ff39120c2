#!/usr/bin/env bash
# Session 53, call 4 (one GPU): call3.sh again (the whole Python suite on
# CUDA) on the final code (after call 3: GCN in float16 run in float32, the
# GCN model's dropout module, edge_dim <= 0 refused).
exec bash bench/results/checks-s53/call3.sh
