"""Issue 60: a config's copies by pickle against deep copies, in one process, A and B interleaved.

Two copies a compose and a conversion make: each load of a node from Hydra's ConfigStore (Hydra deep-copies it;
jitexp's StructuredConfigSource unpickles a copy kept pickled) and the structured schema each `to_config` merges a
config into (OmegaConf.merge deep-copies it; `convert._schema` unpickles one). The deep-copy side is each as before
2026-12-07, put back for its half of each pair. The table: each path's median time and the median of the per-pair
ratios pickle/deepcopy (target: under 1).

    python benchmarks/config_copies.py [--pairs 8]
"""

from __future__ import annotations

import argparse
import copy
import functools
import statistics
import time
from collections.abc import Callable

from hydra._internal.core_plugins.structured_config_source import StructuredConfigSource as HydraSource
from omegaconf import OmegaConf, open_dict

from jitexp.config import convert
from jitexp.config.schema import ExperimentConfig
from jitexp.engine import config_files
from jitexp.engine.compose import compose_raw, hydra_session


def per_call_ms(fn: Callable[[], object], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e3


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--pairs", type=int, default=8)
    a = p.parse_args()
    built = functools.cache(lambda: OmegaConf.structured(ExperimentConfig))
    ours_load, ours_schema = config_files.StructuredConfigSource.load_config, convert._schema
    with hydra_session(None) as hydra:
        composed = compose_raw(hydra, ["workload=matmul"])
        with open_dict(composed):
            del composed["hydra"]

        def compose() -> None:
            compose_raw(hydra, ["workload=matmul", "seed=1"])

        def convert_one() -> None:
            convert.from_dict(composed)

        cases = {
            "compose (workload=matmul)": (compose, 10, "load_config"),
            "from_dict (the composed config)": (convert_one, 30, "_schema"),
        }
        print(f"{'path':34} {'deepcopy':>10} {'pickle':>10} {'ratio':>7} {'target':>7} met")
        for name, (fn, n, what) in cases.items():
            fn()
            ratios, old_ms, new_ms = [], [], []
            for _ in range(a.pairs):
                if what == "load_config":
                    config_files.StructuredConfigSource.load_config = HydraSource.load_config  # type: ignore[method-assign]
                else:
                    convert._schema = lambda: copy.deepcopy(built())
                old_ms.append(per_call_ms(fn, n))
                config_files.StructuredConfigSource.load_config = ours_load  # type: ignore[method-assign]
                convert._schema = ours_schema
                new_ms.append(per_call_ms(fn, n))
                ratios.append(new_ms[-1] / old_ms[-1])
            ratio = statistics.median(ratios)
            print(
                f"{name:34} {statistics.median(old_ms):8.2f}ms {statistics.median(new_ms):8.2f}ms {ratio:7.3f} "
                f"{'< 1':>7} {'yes' if ratio < 1 else 'NO'}"
            )


if __name__ == "__main__":
    main()
