"""``python -m services.merger``: one replica of the merger service."""

from services.merger.spec import SPEC
from services.registry import TOPOLOGY
from shared.process import run_service

if __name__ == "__main__":
    run_service(SPEC, TOPOLOGY)
