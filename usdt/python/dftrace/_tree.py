"""DFTracer's AI logging tree: categories and their leaves.

The one source of the tree. The Python API (_ai.py) builds ai.<cat>.<leaf>
from it, and scripts/gen-usdt-ai writes include/dftrace/usdt_ai.h, the C
macros, from it; a test fails when the checked-in header drifts. Names
and categories are DFTracer's (shared/reference/dftracer-ai-logging.rst).
"""

TREE = {
    "compute": ("forward", "backward", "step"),
    "data": ("preprocess", "item"),
    "dataloader": ("fetch",),
    "comm": ("send", "receive", "barrier", "bcast", "reduce", "all_reduce",
             "gather", "all_gather", "scatter", "reduce_scatter", "all_to_all"),
    "device": ("transfer",),
    "checkpoint": ("capture", "restart"),
    "pipeline": ("epoch", "train", "evaluate", "test"),
}
