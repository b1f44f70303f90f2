"""Settings from the environment (and `.env`), one place for every knob.

Names are ``ORQ_<FIELD>`` except the few the outside world fixes (``REDIS_URL``, ``WHATSAPP_*``).
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

NluMode = Literal["rules", "llm", "hybrid"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ORQ_", env_file=".env", extra="ignore", populate_by_name=True
    )

    redis_url: str = Field(
        default="redis://127.0.0.1:6379/0",
        validation_alias=AliasChoices("REDIS_URL", "ORQ_REDIS_URL"),
        description=(
            "Redis to use (`rediss://` and passwords work); `orquestra up` starts an "
            "embedded one when it does not answer."
        ),
    )
    redis_mode: Literal["single", "cluster"] = Field(
        default="single",
        description=(
            "`cluster`: `REDIS_URL` names any node of a Redis Cluster (see the Redis Cluster page)."
        ),
    )
    partitions: int = Field(
        default=1,
        ge=1,
        le=999,
        description=(
            "Bus streams, pending starts, merge deadlines and heartbeats split into this "
            "many hash-tagged keys (`orq:turns:{p07}`); 1 keeps the single-key names. "
            "Change it only on a drained system."
        ),
    )
    redis_max_connections: int = Field(
        default=128,
        description=(
            "Redis connections per process (per node in cluster mode); beyond it a command "
            "waits for a free one."
        ),
    )
    max_body_bytes: int = Field(
        default=64 * 1024,
        description="Largest `/v1` request body; larger ones get 413 before parsing.",
    )
    http_hot_routes: bool = Field(
        default=True,
        description="`false`: the two requests of an HTTP turn (a message, its replies) go "
        "through FastAPI's routing like every other; the answers are the same, at more CPU.",
    )
    sent_at_max_future_days: int = Field(
        default=3650,
        description=(
            "A message's `sent_at` further ahead of the wall clock than this is refused "
            "(422; a WhatsApp message is journaled, not queued); before 2000-01-01 "
            "likewise."
        ),
    )
    max_long_polls: int = Field(
        default=2000,
        description=(
            "Concurrent reply long-polls per gateway (each holds a connection); beyond it "
            "503 with `Retry-After`."
        ),
    )
    prefix: str = Field(default="orq:", description="Prefix of every stream and key.")
    pack: str = Field(
        default="ctsmash", description="Domain pack: a folder name under `packs/` or a path."
    )
    tenants: str | None = Field(
        default=None,
        description=(
            "YAML file of the businesses one deployment serves (the many-businesses page); "
            "unset: one, from these settings."
        ),
    )

    nlu_mode: NluMode = Field(
        default="rules",
        description="`rules`, `llm` or `hybrid` (rules first, LLM only when unsure).",
    )
    llm_base_url: str = Field(
        default="http://127.0.0.1:11434/v1", description="Any OpenAI-compatible endpoint."
    )
    llm_model: str = Field(default="gpt-4o-mini", description="Model name.")
    llm_api_key: str = Field(default="not-needed", description="API key.")
    llm_timeout_s: float = Field(
        default=8.0, description="Per-call timeout; any failure falls back to the rules."
    )
    llm_response_format: Literal["json_schema", "json_object", "none"] = Field(
        default="json_object",
        description=(
            "How to ask for JSON: `json_schema`, `json_object` or `none` (the schema is in "
            "the prompt either way)."
        ),
    )

    burst_window_ms: int = Field(
        default=250,
        description=(
            "Quiet window that lets a burst of messages become one turn (after a question)."
        ),
    )
    burst_fragment_ms: int = Field(
        default=3500,
        description=(
            "Quiet window after a message that may go on: one that asks nothing (no question "
            'mark: "oi", "quero marcar", "sou a Ana", "32") or is only a greeting; both windows '
            "`0` turn coalescing off."
        ),
    )
    control_words: list[str] = Field(
        default=["cancelar", "cancela", "parar", "pare", "sair", "atendente"],
        description="Words that skip the windows (JSON list).",
    )
    lease_ttl_ms: int = Field(
        default=60_000,
        description="How long a turn may stay in flight before the sweeper restarts it.",
    )
    dedupe_ttl_s: int = Field(
        default=3 * 24 * 3600, description="How long message ids are remembered (3 days)."
    )
    ack_replicas: int | None = Field(
        default=None,
        ge=0,
        le=5,
        description="Replicas that must hold an inbound message before it is acknowledged (and a "
        "reply's delivery claim before the reply goes out): Redis `WAIT`. Unset: 1 when the "
        "Redis (every master of a cluster) has a replica, 0 (off) otherwise, and a master left "
        "with no replica is written to without waiting; set: strict, a write its replicas did "
        "not confirm is refused (503) whatever the reason. Said at start.",
    )
    ack_timeout_ms: int = Field(
        default=1_000,
        ge=1,
        description="How long such a write waits for its replicas; past it the gateway answers "
        "503 with Retry-After (the sender retries; ingest is idempotent by message id).",
    )
    merge_deadline_ms: int = Field(
        default=8_000, description="Merger's wait for missing parts before a partial reply."
    )
    republish_after_ms: int = Field(
        default=10_000,
        description="A completed turn whose reply was not published is re-sent after this.",
    )
    turn_ttl_s: int = Field(
        default=600,
        description=(
            "TTL of per-turn keys (merge state, outboxes, delivery claims): longer than any "
            "redelivery and deadline."
        ),
    )
    sweep_interval_ms: int = Field(
        default=2_000, description="Lease and burst recovery sweep, and stream trimming."
    )

    stream_maxlen: int = Field(
        default=100_000,
        description=(
            "Hard cap of every stream; the gateway's janitor trims what every group has "
            "acknowledged, so streams normally hold only work in flight."
        ),
    )
    replies_kept: int = Field(
        default=200, description="Replies kept per conversation for the HTTP API."
    )
    history_kept: int = Field(
        default=1000,
        ge=1,
        description="Messages kept per conversation in the staff history (both directions).",
    )
    reclaim_idle_ms: int = Field(
        default=15_000,
        description="Pending messages idle this long are claimed by another replica.",
    )
    max_attempts: int = Field(
        default=5, description="Deliveries before a message goes to the dead-letter stream."
    )
    workers: int = Field(
        default=16,
        ge=1,
        description=(
            "Concurrent handlers per subscription in one process, in rules mode "
            "(`ORQ_LLM_WORKERS` when the LLM may be called)."
        ),
    )
    llm_workers: int = Field(
        default=64,
        ge=1,
        description=(
            "Concurrent handlers per subscription in one process when `ORQ_NLU_MODE` is `llm` "
            "or `hybrid`: a handler then mostly waits for the model, and 16 of them would cap "
            "a replica at 16 calls in flight (about 50 a second at 300 ms each)."
        ),
    )
    heartbeat_s: float = Field(default=2.0, description="Consumer heartbeat read by `/healthz`.")
    journal_max: int = Field(default=500, description="Journal entries kept per conversation.")
    state_ttl_days: int = Field(
        default=180,
        description="A conversation idle this long is forgotten (up to a day sooner, never later).",
    )

    handoff_webhook_url: str | None = Field(
        default=None, description="POSTed a JSON summary when a conversation asks for a person."
    )
    handoff_webhook_timeout_s: float = Field(
        default=5.0, description="Timeout of that notification (3 attempts)."
    )
    handoff_webhook_format: Literal["json", "slack"] = Field(
        default="json",
        description=(
            '`json` (the summary as data) or `slack` (`{"text"}`, for Slack and Discord '
            "incoming webhooks)."
        ),
    )
    handoff_remind_min: float = Field(
        default=30,
        ge=0,
        description=(
            "A conversation still waiting for a person this long is notified once more (0: never)."
        ),
    )
    human_idle_min: float = Field(
        default=720,
        ge=0,
        description=(
            "A human-owned conversation with no staff message this long goes back to the "
            "bot (0: never)."
        ),
    )
    admin_token: str | None = Field(
        default=None,
        description=(
            "Bearer token of every route: the `/v1/conversations` routes (state, journal, "
            "handoff) and the HTTP channel; required to listen beyond loopback."
        ),
    )
    api_token: str | None = Field(
        default=None,
        description=(
            "Bearer token of the HTTP channel (`POST /v1/messages`, the replies route) for "
            "any conversation; unset with `ORQ_ADMIN_TOKEN` unset too: the channel is open "
            "(local development)."
        ),
    )
    webchat_secret: str | None = Field(
        default=None,
        description=(
            "Signs web chat session tokens (`POST /v1/webchat/sessions`); unset: no sessions."
        ),
    )
    http_channel: bool = Field(
        default=True,
        description=(
            "`false`: the HTTP channel is off (WhatsApp-only); only the admin token still "
            "posts and reads replies."
        ),
    )
    log_level: str = Field(default="INFO", description="Log level.")
    log_json: bool | None = Field(
        default=None, description="JSON logs; default: JSON when stderr is not a terminal."
    )
    faststream_log: bool = Field(
        default=False, description="FastStream's per-message logs (costly, off by default)."
    )
    fault_inject: str | None = Field(
        default=None,
        description=(
            "Tests only: `GROUP:TEXT` makes GROUP's handler fail on messages containing TEXT."
        ),
    )
    test_clock: bool = Field(
        default=False,
        description=(
            "Tests only: `POST /v1/admin/clock` stores a clock offset in Redis that every "
            "scheduler reads."
        ),
    )
    scheduler_tick_ms: int = Field(
        default=500, description="How often a scheduler replica looks for due messages."
    )
    scheduler_claim_ms: int = Field(
        default=15_000,
        description=(
            "A claimed message its replica did not finish in this time (it died) is claimed "
            "by another."
        ),
    )
    host: str = Field(
        default="127.0.0.1",
        description="Gateway bind address; anything but loopback needs `ORQ_ADMIN_TOKEN`.",
    )
    port: int = Field(default=8000, description="Gateway port.")
    metrics_port: int = Field(default=0, description="A worker's Prometheus port (0 = off).")

    @property
    def handlers(self) -> int:
        """Concurrent handlers per subscription: ``workers``, or ``llm_workers`` when a
        handler may wait for the LLM."""
        return self.workers if self.nlu_mode == "rules" else self.llm_workers


@cache
def get_settings() -> Settings:
    return Settings()
