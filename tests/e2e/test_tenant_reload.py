"""Packs reloaded without a restart (``orquestra tenants reload``), end to end: one ``orquestra
up`` serving two tenants, one of them on a copy of the staffing pack that the tests edit.

Why it matters: a business changes an answer, a price or a class time during the day, and
restarting every process of a deployment that serves many businesses for one of them is not
an option. The reload must change only the tenant named, leave it as it was when its new pack
is broken, and take up a tenant added to the file.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared.faq.config import FaqConfig
from shared.pack import PACKS_DIR, load_pack
from tests.system import ROOT, System, service_env

OPERATOR = "op-" + uuid.uuid4().hex
CT_ADMIN = "ct-admin-" + uuid.uuid4().hex
RV_ADMIN = "rv-admin-" + uuid.uuid4().hex
NEW_ADMIN = "new-admin-" + uuid.uuid4().hex
QUESTION = "a Julia reserva o plantão pra mim?"
NEW_ANSWER = "Resposta nova da Revoluna: quem confirma o plantão é o responsável pela vaga."


@dataclass
class Running:
    system: System
    env: dict[str, str]
    tenants_file: Path
    pack: Path  # revoluna's pack, a copy of packs/staffing

    def say(self, token: str, text: str) -> str:
        conversation = f"reload-{uuid.uuid4().hex[:10]}"
        headers = {"authorization": f"Bearer {token}"}
        body = {"conversation_id": conversation, "message_id": uuid.uuid4().hex, "text": text}
        posted = self.system.http.post("/v1/messages", json=body, headers=headers)
        assert posted.status_code == 202, posted.text
        replies = self.system.http.get(
            f"/v1/conversations/{conversation}/replies",
            params={"wait": 20},
            headers=headers,
        )
        assert replies.status_code == 200 and replies.json()["replies"], replies.text
        return str(replies.json()["replies"][0]["text"])

    def reload(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "orquestra.cli", "tenants", "reload", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )


def tenant(tenant_id: str, pack: str, token: str) -> dict[str, Any]:
    return {"id": tenant_id, "pack": pack, "admin_token": token}


def answer_of(pack: str, entry_id: str) -> str:
    """The pack's answer as the files say now (``load_pack`` would keep its first reading)."""
    entries = load_pack.__wrapped__(pack).section("faq", FaqConfig).entries
    return next(e.answer for e in entries if e.id == entry_id).strip()


def reserva(pack: Path) -> str:
    return answer_of(str(pack), "reserva")


ADDRESS = answer_of("ctsmash", "endereco")


@pytest.fixture(scope="module")
def running(
    redis_url: str, prefix: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Running]:
    folder = tmp_path_factory.mktemp("reload")
    pack = folder / "revoluna"
    shutil.copytree(PACKS_DIR / "staffing", pack)
    tenants_file = folder / "tenants.yaml"
    listed = [tenant("ctsmash", "ctsmash", CT_ADMIN), tenant("revoluna", str(pack), RV_ADMIN)]
    tenants_file.write_text(yaml.safe_dump({"tenants": listed}), encoding="utf-8")
    env = {
        "ORQ_TENANTS": str(tenants_file),
        "ORQ_ADMIN_TOKEN": OPERATOR,
        "ORQ_BURST_WINDOW_MS": "0",
        "ORQ_BURST_FRAGMENT_MS": "0",
    }
    with System.up(redis_url, f"{prefix}reload:", **env) as system:
        yield Running(system, service_env(redis_url, f"{prefix}reload:", **env), tenants_file, pack)


def test_a_reload_changes_the_named_tenants_answers_and_no_one_elses(running: Running) -> None:
    before = reserva(running.pack)
    assert before in running.say(RV_ADMIN, QUESTION)
    assert ADDRESS in running.say(CT_ADMIN, "onde fica a CT?")

    faq_file = running.pack / "faq.yaml"
    faq = yaml.safe_load(faq_file.read_text(encoding="utf-8"))
    [entry] = [e for e in faq["faq"]["entries"] if e["id"] == "reserva"]
    entry["answer"] = NEW_ANSWER
    faq_file.write_text(yaml.safe_dump(faq, allow_unicode=True), encoding="utf-8")
    # Not applied until asked for: the running processes still answer from the old pack.
    assert before in running.say(RV_ADMIN, QUESTION)

    done = running.reload("--tenant", "revoluna")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reloaded revoluna" in done.stdout
    reply = running.say(RV_ADMIN, QUESTION)
    assert NEW_ANSWER in reply and before not in reply
    assert ADDRESS in running.say(CT_ADMIN, "onde fica a CT?")


def test_a_broken_pack_leaves_the_tenant_as_it_was(running: Running) -> None:
    answer = reserva(running.pack)
    broken = running.pack / "zz_broken.yaml"
    broken.write_text("faq: [unclosed\n", encoding="utf-8")
    try:
        done = running.reload("--tenant", "revoluna")
        # The command warns that the pack does not load; every process, asked all the same,
        # keeps serving the tenant as it was instead of dropping it.
        assert done.returncode == 0, done.stdout + done.stderr
        assert "revoluna" in done.stdout and "disabled" in done.stdout, done.stdout
        assert answer in running.say(RV_ADMIN, QUESTION)
    finally:
        broken.unlink()


def test_a_tenant_added_to_the_file_serves_after_a_reload(running: Running) -> None:
    headers = {"authorization": f"Bearer {NEW_ADMIN}"}
    assert running.system.http.get("/v1/conversations", headers=headers).status_code == 401
    listed = yaml.safe_load(running.tenants_file.read_text(encoding="utf-8"))["tenants"]
    listed.append(tenant("beach-two", "ctsmash", NEW_ADMIN))
    running.tenants_file.write_text(yaml.safe_dump({"tenants": listed}), encoding="utf-8")

    done = running.reload()
    assert done.returncode == 0, done.stdout + done.stderr
    health = running.system.http.get("/healthz").json()
    assert health["tenants"]["beach-two"] == "ok"
    assert ADDRESS in running.say(NEW_ADMIN, "onde fica a CT?")
