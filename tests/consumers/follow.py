"""A service following the sentinel: reads the bulk factor with the Python package's
BulkFactorReader every quarter second and prints each reading as one JSON line (for
tests/tests/consumers_follow.rs). Arguments: CACHE PARAMETER CACHE_KEY MAX_AGE REFRESH."""

import json
import sys
import time

from capacity_admission import BulkFactorReader


def main() -> None:
    cache, parameter, key, max_age, refresh = sys.argv[1:6]
    with BulkFactorReader(cache=cache, parameter=parameter, cache_key=key, max_age=int(max_age),
                          refresh=float(refresh), timeout=1.0) as reader:
        while True:
            r = reader.read()
            print(json.dumps({"factor": r.factor, "source": r.source, "state": r.state, "sequence": r.sequence,
                              "decided_at": r.decided_at, "error": r.error, "at": time.time()}), flush=True)
            time.sleep(0.25)


if __name__ == "__main__":
    main()
