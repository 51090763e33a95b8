"""Load ``bench/injection_eval.py``, which is a script, not part of the package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench" / "injection_eval.py"


def load_eval_module() -> ModuleType:
    if "injection_eval" in sys.modules:
        return sys.modules["injection_eval"]
    spec = importlib.util.spec_from_file_location("injection_eval", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # attrs resolves the module of its classes
    spec.loader.exec_module(module)
    return module
