"""A state document as the sentinel publishes it, and publishing one to Redis and SSM (the
reader tests' and the BulkAdmission tests' helpers)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

NOW = 1_792_506_600  # 2026-10-20T14:30:00Z
PARAMETER = "/capacity/state"


def document(bulk=0.5, age=60, state="constrained", sequence=42, **extra) -> str:
    at = datetime.fromtimestamp(NOW - age, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc = {"state": state, "factors": {"bulk": bulk, "heavy": 0.5, "write": 1.0, "read": 1.0}, "decided_at": at,
           "policy": {"name": "capacity-policy", "version": "1.0.0", "digest": "ab" * 32}, "pinned": False,
           "pin_expires_at": None, "cause": "escalate", "sequence": sequence}
    doc.update(extra)
    return json.dumps(doc)


def publish(redis_server, ssm, cache=None, parameter=None, expire_ms=None):
    if cache is not None:
        with redis_server.client() as c:
            c.set("capacity:state", cache, px=expire_ms)
    if parameter is not None:
        ssm.put_parameter(Name=PARAMETER, Value=parameter, Type="String", Overwrite=True)


def withdraw(redis_server, ssm):
    """Nothing published: the key and the parameter both absent (both reads fail)."""
    with redis_server.client() as c:
        c.delete("capacity:state")
    try:
        ssm.delete_parameter(Name=PARAMETER)
    except ssm.exceptions.ParameterNotFound:
        pass
