"""The benchmark's results as a table and as a list of targets, met or not (pure).

Both read the results dict that ``bench.run`` produces (the same one ``--json`` prints), so a
saved JSON can be rendered again and two runs compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

# The targets: 2 cores, rules mode, one replica of every service.
MIN_SHARE_OF_FLOOR = 0.5
MIN_TURNS_PER_S = 300.0
MAX_P50_ONE_MS = 15.0
MAX_P99_HALF_MS = 100.0
MIN_LLM_TURNS_PER_S = 50.0
MAX_LLM_RATIO = 1.2
MIN_SCALING_GAIN = 1.15
LLM_PHASES = (
    "light",
    "default_workers",
    "more_workers",
)  # a second replica must add at least this factor to count as "raises"


@dataclass(frozen=True)
class Target:
    name: str
    wanted: str
    measured: str
    met: bool | None  # None: not measured in this run


def _num(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.{digits}f}"


def _get(results: dict[str, Any], *path: str) -> Any:
    node: Any = results
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def targets(results: dict[str, Any]) -> list[Target]:
    """Every target of the issue with what this run measured."""
    found: list[Target] = []
    peak = _get(results, "system", "max", "turns_per_s")
    floor = _get(results, "baseline_b", "max", "turns_per_s")
    if peak is not None and floor is not None:
        share = peak / floor if floor else math.nan
        found.append(
            Target(
                "throughput vs framework floor (B)",
                f">= {MIN_SHARE_OF_FLOOR:.1f} x B ({_num(MIN_SHARE_OF_FLOOR * floor)} turns/s)",
                f"{_num(peak)} turns/s = {share:.2f} x B",
                share >= MIN_SHARE_OF_FLOOR,
            )
        )
    if peak is not None:
        found.append(
            Target(
                "sustained throughput",
                f">= {MIN_TURNS_PER_S:.0f} turns/s",
                f"{_num(peak)} turns/s",
                peak >= MIN_TURNS_PER_S,
            )
        )
    one = _get(results, "system", "one", "p50_ms")
    if one is not None:
        found.append(
            Target(
                "p50 latency, one conversation",
                f"<= {MAX_P50_ONE_MS:.0f} ms",
                f"{_num(one)} ms",
                one <= MAX_P50_ONE_MS,
            )
        )
    half = _get(results, "system", "half", "p99_ms")
    if half is not None:
        found.append(
            Target(
                "p99 latency at half the maximum load",
                f"<= {MAX_P99_HALF_MS:.0f} ms",
                f"{_num(half)} ms",
                half <= MAX_P99_HALF_MS,
            )
        )
    for label in LLM_PHASES:
        llm = _get(results, "llm", label)
        if llm is None:
            continue
        workers = llm.get("workers")
        where = f"{llm.get('users')} conv., ORQ_LLM_WORKERS={workers}"
        if label != "light":
            found.append(
                Target(
                    f"LLM mode throughput ({where})",
                    f">= {MIN_LLM_TURNS_PER_S:.0f} turns/s",
                    f"{_num(llm['turns_per_s'])} turns/s",
                    llm["turns_per_s"] >= MIN_LLM_TURNS_PER_S,
                )
            )
        ratio = _get(llm, "critical_path", "ratio_p50")
        if ratio is not None and not math.isnan(ratio):
            found.append(
                Target(
                    f"LLM turn vs its LLM time ({where})",
                    f"<= {MAX_LLM_RATIO:.1f} x (p50)",
                    f"{ratio:.2f} x",
                    ratio <= MAX_LLM_RATIO,
                )
            )
    rows = _get(results, "scaling", "rows")
    if rows and len(rows) >= 2:
        first, second = rows[0]["turns_per_s"], rows[1]["turns_per_s"]
        gain = second / first if first else math.nan
        found.append(
            Target(
                "a 2nd replica of the bottleneck (trial) raises throughput",
                f">= {MIN_SCALING_GAIN:.2f} x",
                f"{gain:.2f} x ({_num(first)} -> {_num(second)} turns/s)",
                gain >= MIN_SCALING_GAIN,
            )
        )
    return found


def _phase_row(label: str, phase: dict[str, Any] | None) -> list[str] | None:
    if not phase:
        return None
    cpu = phase.get("cpu_ms_per_turn_total")
    return [
        label,
        _num(phase.get("turns_per_s")),
        _num(phase.get("p50_ms")),
        _num(phase.get("p95_ms")),
        _num(phase.get("p99_ms")),
        _num(cpu, 2),
        _num(phase.get("redis_commands_per_turn"), 0),
        _num(phase.get("llm_calls_per_turn"), 2),
        _num(phase.get("other_load_cores"), 2),
    ]


def _table(header: list[str], rows: list[list[str]], *, numbers: bool = True) -> list[str]:
    """A plain-text table: the first column left-aligned, the others right-aligned when they
    hold numbers."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for n, row in enumerate([header, *rows]):
        cells = [row[0].ljust(widths[0])]
        for cell, width in zip(row[1:], widths[1:], strict=True):
            cells.append(cell.rjust(width) if numbers else cell.ljust(width))
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def render(results: dict[str, Any]) -> str:
    """The table of every figure, the cost breakdown, the scaling table and the targets."""
    m = results.get("machine", {})
    lines = [
        f"orquestra bench: {m.get('cpus')} CPUs ({m.get('cpu_model') or 'unknown CPU'}), "
        f"Python {m.get('python')}, load average before {m.get('load_1m_before')}, "
        f"{results.get('elapsed_s')} s",
        "rules mode, one replica of every service, burst windows 0 unless said; "
        "latency = POST accepted -> reply read;",
        "CPU = services + Redis; others' cores = CPU used meanwhile by processes outside the "
        "benchmark",
        "",
    ]
    users = _get(results, "system", "max", "users")
    half_rate = _get(results, "system", "half", "offered_rate")
    b_users = _get(results, "baseline_b", "max", "users")
    a_users = _get(results, "baseline_a", "max", "users")
    window = _get(results, "burst_window", "burst_window_ms")
    fragment = _get(results, "burst_window", "burst_fragment_ms")
    # Runs since the fragment rule: complete messages only, its longer wait off then on.
    burst_label = f"system, 1 conversation, burst window {window} ms" + (
        f", fragment {fragment} ms" if fragment is not None else ""
    )
    burst_off_label = f"system, 1 conversation, burst window {window} ms, fragment off"
    candidates = [
        ("system, 1 conversation", _get(results, "system", "one")),
        (f"system, {users} conversations (max)", _get(results, "system", "max")),
        (f"system, half load ({_num(half_rate)} turns/s offered)", _get(results, "system", "half")),
        (burst_off_label, _get(results, "burst_window", "one_fragment_off")),
        (burst_label, _get(results, "burst_window", "one")),
        ("A logic floor (one process, no bus), 1 conv.", _get(results, "baseline_a", "one")),
        (f"A logic floor, {a_users} conversations", _get(results, "baseline_a", "max")),
        ("B framework floor (bare FastStream), 1 chain", _get(results, "baseline_b", "one")),
        (f"B framework floor, {b_users} chains", _get(results, "baseline_b", "max")),
    ]
    for label in LLM_PHASES:
        llm = _get(results, "llm", label)
        if llm:
            candidates.append(
                (
                    f"C llm mode, {results['llm']['delay_ms']} ms LLM, {llm['users']} conv., "
                    f"ORQ_LLM_WORKERS={llm.get('workers')}",
                    llm,
                )
            )
    rows = [row for label, phase in candidates if (row := _phase_row(label, phase))]
    header = [
        "",
        "turns/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "CPU ms/turn",
        "Redis cmd/turn",
        "LLM/turn",
        "others' cores",
    ]
    lines += _table(header, rows)
    floor = _get(results, "baseline_b", "max", "messages_per_s")
    if floor is not None:
        # Runs saved before the merger stopped reading the turns stream had eight.
        deliveries = _get(results, "baseline_b", "deliveries_per_chain") or 8
        lines.append(
            f"B moves {_num(floor, 0)} messages/s at its peak ({deliveries} deliveries per "
            "chain, the hops of a one-specialist turn)."
        )
    speed = results.get("speed_probe_ms")
    if speed:
        probes = ", ".join(f"{name} {_num(ms, 0)}" for name, ms in speed.items())
        lines.append(
            f"speed probe before each part (CPU ms of a fixed loop, lower = faster): {probes}"
        )
    waits = _get(results, "burst_window", "waits")
    if waits:
        chosen = ", ".join(f"{rule}: {n}" for rule, n in sorted(waits.items()))
        lines.append(
            f"burst part, fragment wait on: the quiet window each turn waited (journal): {chosen}"
        )
    idle = _get(results, "system", "idle")
    if idle:
        parts = [f"{k} {_num(v)}" for k, v in idle["cpu_ms_per_s"].items()]
        lines += [
            "",
            f"idle (no traffic): {_num(idle['cores'], 3)} cores, "
            f"{_num(idle['redis_commands_per_s'], 0)} Redis commands/s; CPU ms/s: "
            + ", ".join(parts),
        ]
    peak = _get(results, "system", "max")
    if peak and peak.get("cpu_ms_per_turn"):
        parts = [f"{k} {_num(v, 2)}" for k, v in peak["cpu_ms_per_turn"].items()]
        if not idle:
            lines.append("")
        lines.append("CPU ms per turn at max load: " + ", ".join(parts))
        if "cores_used" in peak:
            lines.append(
                f"cores used by the system: {_num(peak.get('cores_used'), 2)}; by other "
                f"processes on the machine: {_num(peak.get('other_load_cores'), 2)}"
            )
        elif "machine_cores" in peak:
            lines.append(
                f"cores used on this machine (the system under test is not ours to see): "
                f"{_num(peak['machine_cores'], 2)}"
            )
    if peak and peak.get("redis_top_commands_per_turn"):
        top = ", ".join(f"{k} {_num(v)}" for k, v in peak["redis_top_commands_per_turn"].items())
        memory = peak.get("redis_memory", {})
        lines.append(
            f"Redis per turn at max load: {_num(peak.get('redis_commands_per_turn'))} commands "
            f"in {_num(peak.get('redis_reads_per_turn'))} round trips "
            f"(Lua-internal included; top: {top}); memory {_num(memory.get('used_memory_mb'))} MB, "
            f"{memory.get('keys', '-')} keys after the phase"
        )
        if peak.get("redis_waits_per_turn"):
            lines.append(
                f"replica acknowledgement at max load: {_num(peak['redis_waits_per_turn'])} WAITs "
                f"per turn (ingest, start, delivery claim; ORQ_ACK_REPLICAS=0 turns them off)"
            )
    if peak and peak.get("redis_commands_per_turn_per_node"):
        per_node = peak["redis_commands_per_turn_per_node"]
        lines.append(
            "Redis Cluster, commands per turn at max load by master: "
            + ", ".join(f"{node} {_num(count)}" for node, count in sorted(per_node.items()))
        )
    if spread := results.get("partitions"):
        lines.append(
            "turns of the max phase by partition (master): "
            + ", ".join(f"{part} {row['turns']} ({row['node']})" for part, row in spread.items())
        )
    for label in LLM_PHASES:
        path = _get(results, "llm", label, "critical_path")
        if path and path.get("turns"):
            lines.append(
                f"C ({_get(results, 'llm', label, 'users')} conv., "
                f"ORQ_LLM_WORKERS={_get(results, 'llm', label, 'workers')}): p50 LLM time on the "
                f"critical path {_num(path['llm_ms_p50'], 0)} ms, p50 turn "
                f"{_num(path['latency_ms_p50'], 0)} ms, turn/LLM p50 {path['ratio_p50']:.2f} x, "
                f"p95 {path['ratio_p95']:.2f} x ({path['turns']} turns)"
            )
    profile = results.get("profile")
    if profile and profile.get("samples"):
        lines += [
            "",
            f"Profile of {profile['service']} at max load ({profile['samples']} py-spy samples), "
            "by area:",
        ]
        lines += [f"  {100 * share:5.1f}%  {name}" for share, name in profile["areas"]]
        lines.append("  functions (inclusive):")
        lines += [f"  {100 * share:5.1f}%  {name}" for share, name in profile["inclusive"][:12]]
        lines.append("  functions (self):")
        lines += [f"  {100 * share:5.1f}%  {name}" for share, name in profile["self"][:8]]
    scaling = results.get("scaling")
    if scaling and scaling.get("rows"):
        lines += [
            "",
            f"Scaling: trial burning {scaling['burn_ms']} ms CPU per task, booking "
            f"conversations, {scaling['rows'][0]['users']} conversations",
        ]
        table = [
            [
                str(r["trial_replicas"]),
                _num(r["turns_per_s"]),
                _num(r["p50_ms"]),
                _num(r["p99_ms"]),
                _num(r.get("cpu_ms_per_turn", {}).get("trial"), 2),
                _num(r.get("cores_used"), 2),
                _num(r.get("other_load_cores"), 2),
            ]
            for r in scaling["rows"]
        ]
        lines += _table(
            [
                "trial replicas",
                "turns/s",
                "p50 ms",
                "p99 ms",
                "trial CPU ms/turn",
                "system cores",
                "other load cores",
            ],
            table,
        )
    found = targets(results)
    if found:
        lines += ["", "Targets"]
        verdict = {True: "met", False: "NOT met", None: "not measured"}
        table = [[t.name, t.wanted, t.measured, verdict[t.met]] for t in found]
        lines += _table(["target", "wanted", "measured", ""], table, numbers=False)
    return "\n".join(lines)
