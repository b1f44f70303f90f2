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
        description="Redis to use; `orquestra up` falls back to an embedded one if unreachable.",
    )
    redis_mode: Literal["single", "cluster"] = Field(
        default="single",
        description="cluster: `REDIS_URL` names any node of a Redis Cluster (README "
        '"Redis Cluster").',
    )
    partitions: int = Field(
        default=1,
        ge=1,
        le=999,
        description="Streams and global sorted sets split into this many hash-tagged "
        "partitions; 1 keeps the single-key names. Change it only on a drained system.",
    )
    redis_max_connections: int = Field(
        default=128, description="Connections per process; beyond it a command waits its turn."
    )
    max_body_bytes: int = Field(
        default=64 * 1024, description="Largest /v1 request body; larger ones get 413."
    )
    sent_at_max_future_days: int = Field(
        default=3650,
        description="A message's sent_at further ahead of the wall clock than this is refused.",
    )
    max_long_polls: int = Field(
        default=2000, description="Concurrent reply long-polls per gateway; beyond it 503."
    )
    prefix: str = Field(default="orq:", description="Prefix of every stream and key name.")
    pack: str = Field(default="ctsmash", description="Domain pack: a name under packs/ or a path.")
    tenants: str | None = Field(
        default=None,
        description='YAML file of the businesses this deployment serves (README "Many '
        'businesses"); unset: one, from these settings.',
    )

    nlu_mode: NluMode = Field(default="rules", description="rules, llm or hybrid.")
    llm_base_url: str = Field(default="http://127.0.0.1:11434/v1")
    llm_model: str = Field(default="gpt-4o-mini")
    llm_api_key: str = Field(default="not-needed")
    llm_timeout_s: float = Field(default=8.0)
    llm_response_format: Literal["json_schema", "json_object", "none"] = Field(
        default="json_object", description="How to ask the server for JSON."
    )

    burst_window_ms: int = Field(
        default=250, description="Quiet window that lets a burst of messages become one turn."
    )
    burst_fragment_ms: int = Field(
        default=2500,
        description="Quiet window after a fragment (a greeting or opener alone, no request yet); "
        "0 with burst_window_ms 0 turns coalescing off.",
    )
    control_words: list[str] = Field(
        default=["cancelar", "cancela", "parar", "pare", "sair", "atendente"],
        description="Words that skip the burst window.",
    )
    lease_ttl_ms: int = Field(default=60_000, description="How long a turn may stay in flight.")
    dedupe_ttl_s: int = Field(default=3 * 24 * 3600, description="How long message ids are kept.")
    ack_replicas: int | None = Field(
        default=None,
        ge=0,
        le=5,
        description="Replicas that must hold an inbound message before it is acknowledged (and a "
        "reply's delivery claim before the reply goes out): Redis `WAIT`. Unset: 1 when the "
        "Redis (every master of a cluster) has a replica, 0 (off) otherwise; said at start.",
    )
    ack_timeout_ms: int = Field(
        default=1_000,
        ge=1,
        description="How long such a write waits for its replicas; past it the gateway answers "
        "503 with Retry-After (the sender retries; ingest is idempotent by message id).",
    )
    merge_deadline_ms: int = Field(default=8_000, description="Merger's wait for missing parts.")
    republish_after_ms: int = Field(
        default=10_000, description="A completed turn not yet published is re-sent after this."
    )
    turn_ttl_s: int = Field(
        default=600,
        description="TTL of per-turn keys (merge, outboxes, delivery claims): longer than any "
        "redelivery (max_attempts x reclaim_idle) and any deadline.",
    )
    sweep_interval_ms: int = Field(
        default=2_000, description="Lease/inbox recovery sweep and stream trimming."
    )

    stream_maxlen: int = Field(
        default=100_000,
        description="Hard cap of every stream; the gateway's janitor trims acknowledged work.",
    )
    replies_kept: int = Field(default=200, description="Replies kept per conversation.")
    history_kept: int = Field(
        default=1000, ge=1, description="Messages (both directions) kept per conversation."
    )
    reclaim_idle_ms: int = Field(
        default=15_000, description="Pending messages idle this long are claimed by a replica."
    )
    max_attempts: int = Field(default=5, description="Deliveries before a dead letter.")
    workers: int = Field(default=16, description="Concurrent handlers per subscriber.")
    heartbeat_s: float = Field(default=2.0)
    journal_max: int = Field(default=500, description="Journal entries kept per conversation.")
    state_ttl_days: int = Field(default=180, description="Idle conversations are forgotten.")

    handoff_webhook_url: str | None = Field(
        default=None, description="Notified (POST JSON) when a conversation asks for a person."
    )
    handoff_webhook_timeout_s: float = Field(default=5.0)
    handoff_webhook_format: Literal["json", "slack"] = Field(
        default="json", description="json: the full summary; slack: a Slack/Discord message."
    )
    handoff_remind_min: float = Field(
        default=30, ge=0, description="Notify once more after this wait for a person (0: off)."
    )
    human_idle_min: float = Field(
        default=720,
        ge=0,
        description="A human-owned conversation returns to the bot after "
        "this long without a staff message (0: never).",
    )
    admin_token: str | None = Field(default=None, description="Bearer token of admin routes.")
    api_token: str | None = Field(
        default=None, description="Bearer token of POST /v1/messages and the replies route."
    )
    webchat_secret: str | None = Field(
        default=None, description="Signs web chat session tokens; unset: no sessions."
    )
    http_channel: bool = Field(
        default=True, description="false: the HTTP channel is off (a WhatsApp-only deployment)."
    )
    log_level: str = Field(default="INFO")
    log_json: bool | None = Field(default=None, description="JSON logs; default: when not a TTY.")
    faststream_log: bool = Field(
        default=False, description="FastStream's per-message logs (costly: off by default)."
    )
    fault_inject: str | None = Field(
        default=None,
        description="Testing only: GROUP:TEXT makes GROUP's handler fail on messages with TEXT.",
    )
    test_clock: bool = Field(
        default=False,
        description="Testing only: POST /v1/admin/clock moves every process's clock.",
    )
    scheduler_tick_ms: int = Field(
        default=500, description="How often a scheduler replica looks for due messages."
    )
    scheduler_claim_ms: int = Field(
        default=15_000,
        description="A claimed message not finished in this time is claimed by another replica.",
    )
    host: str = Field(default="127.0.0.1")
    port: int = Field(default=8000)
    metrics_port: int = Field(default=0, description="Worker metrics port; 0 = off.")


@cache
def get_settings() -> Settings:
    return Settings()
