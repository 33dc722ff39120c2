# -*- Python -*-
# lit configuration of the gnnc tests.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "GNNC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gnn_obj_root, "test")

config.substitutions.append(("%gnn_src_root", config.gnn_src_root))
config.substitutions.append(("%examples", os.path.join(config.gnn_src_root, "examples")))
config.substitutions.append(("%gnn_tools_dir", config.gnn_tools_dir))

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    [ToolSubst("gnn-opt", unresolved="fatal"), ToolSubst("gnn-run", unresolved="fatal"),
     ToolSubst("gnn-translate", unresolved="fatal")],
    [config.gnn_tools_dir])

# Real data sets (../shared/datasets beside the checkout, or $GNNC_DATASETS).
datasets = os.environ.get("GNNC_DATASETS") or os.path.join(
    config.gnn_src_root, "..", "shared", "datasets")
if os.path.isfile(os.path.join(datasets, "cora", "meta.txt")):
    config.available_features.add("datasets")
    config.substitutions.append(("%datasets", os.path.abspath(datasets)))

# Built with the CUDA runtime (NVRTC): kernels can be compiled, with or
# without a GPU.
if config.gnn_enable_cuda.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("cuda-runtime")

# Built with sanitizers (-DGNNC_SANITIZE=...): tests that time the tools
# (test/Reliability/compile-scaling*.test) do not run there.
if getattr(config, "gnn_sanitize", ""):
    config.available_features.add("sanitizers")

# Tests that time the tools (REQUIRES: timing) run only in a lit run of
# their own, `--param timing=1`, which ctest runs alone (the test
# `lit-timing`, RUN_SERIAL): beside the rest of the suite on a 2-core
# machine their CPU times grew by a third now and then.
if lit_config.params.get("timing", "0") == "1":
    config.available_features.add("timing")

# GPU integration tests run only where a CUDA device is visible.
if shutil.which("nvidia-smi") and os.system("nvidia-smi -L > /dev/null 2>&1") == 0:
    config.available_features.add("cuda")
