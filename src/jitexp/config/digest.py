"""A job's config digest: what `resume` compares between a folder's rows and the job about to run."""

from __future__ import annotations

import hashlib
import json

from omegaconf import DictConfig, OmegaConf, open_dict, read_write
from omegaconf.errors import OmegaConfBaseException

STEERING = ("resume", "fail_on_error", "overwrite", "tune")  # keys that steer a run but change no measurement
# keys added since config_hash was first written, left out at the value that measures as before the key existed: a
# folder an earlier jitexp wrote is still the same config for resume=true
ADDED: dict[tuple[str, str], object] = {("timing", "max_warmup_time_s"): None}


def config_hash(cfg: DictConfig) -> str | None:
    """A short digest of the job's resolved config, without Hydra's own node and the keys that only steer the run;
    None when it does not resolve outside a running job (an interpolation of `${hydra:...}`)."""
    if "hydra" in cfg:
        cfg = cfg.copy()
        with read_write(cfg), open_dict(cfg):
            del cfg["hydra"]
    try:
        data = OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException:
        return None
    assert isinstance(data, dict)
    for key in STEERING:
        data.pop(key, None)
    for (node, key), before in ADDED.items():
        values = data.get(node)
        if isinstance(values, dict) and key in values and values[key] == before:
            del values[key]
    return hashlib.sha1(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:12]
