"""``python -m services.triage``: one replica of the triage service."""

from services.registry import TOPOLOGY
from services.triage.spec import SPEC
from shared.process import run_service

if __name__ == "__main__":
    run_service(SPEC, TOPOLOGY)
