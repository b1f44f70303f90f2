"""``python -m services.scheduler``: one replica of the scheduler (any number may run)."""

from services.registry import TOPOLOGY
from services.scheduler.spec import SPEC
from shared.process import run_service

if __name__ == "__main__":
    run_service(SPEC, TOPOLOGY)
