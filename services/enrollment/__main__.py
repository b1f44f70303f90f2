"""``python -m services.enrollment``: one replica of the enrollment service."""

from services.enrollment.spec import SPEC
from services.registry import TOPOLOGY
from shared.process import run_service

if __name__ == "__main__":
    run_service(SPEC, TOPOLOGY)
