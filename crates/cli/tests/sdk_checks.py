"""What the SDK check scripts (`openai_e2e.py`, `responses_e2e.py`, `anthropic_e2e.py`)
share: running every `check_` method of their `Checks` class, in the order written.

Each check prints `ok NAME` or `FAILED NAME:` and its traceback; the exit status is the
number of failures, so the Rust test that runs a script fails when any check does.
"""

import sys
import traceback


def run_checks(checks_class):
    """Runs the checks of `checks_class`, made with the base URL given as argument 1."""
    checks = checks_class(sys.argv[1])
    names = [name for name in dir(checks) if name.startswith("check_")]
    failures = 0
    for name in sorted(names, key=lambda n: checks_class.__dict__[n].__code__.co_firstlineno):
        try:
            getattr(checks, name)()
            print(f"ok {name}", flush=True)
        except Exception:  # noqa: BLE001 - every failure is reported, then counted
            failures += 1
            print(f"FAILED {name}:\n{traceback.format_exc()}", flush=True)
    print(f"{len(names) - failures} of {len(names)} checks passed", flush=True)
    sys.exit(failures)
