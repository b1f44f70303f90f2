"""``python -m services.mode_router``: one replica of the mode_router service."""

from services.mode_router.spec import SPEC
from services.registry import TOPOLOGY
from shared.process import run_service

if __name__ == "__main__":
    run_service(SPEC, TOPOLOGY)
