"""One simulated agent of `slowave bench load`: full cognitive cycles over MCP streamable HTTP.

Lives here: the cycle (activate → remember → recall → feedback on everything shown → commit),
the synthetic facts it writes, the storage_busy retry, and the `Tally` every agent of a phase
adds its latencies, HTTP statuses, errors and written ids to. Does not live here: the server,
the phases or the read-back (load, load_server).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from slowave_site.bench.scale import CLAIMS, OBJECTS, PARTS, SUBJECTS

TOOLS = ("activate", "remember", "recall", "feedback", "commit")
FACTS_PER_CYCLE = 3
FACT_TYPES = ("fact", "decision", "constraint")
SHARED_EVERY = 4  # every 4th cycle of an agent works in the scope all agents share
PROCEDURE_EVERY = 4  # and every 4th commit records a procedure (later activations show it)
BUSY_RETRIES = 8
BUSY_BACKOFF_SECONDS = 0.05  # doubled per retry: 0.05 … 6.4 s
CALL_TIMEOUT_SECONDS = 120.0  # generous: the real model on two shared cores
ERROR_SAMPLES = 10


@dataclass
class Tally:
    """What the agents of one phase add to; anyio tasks share one thread, so no locks."""

    latency_ms: dict[str, list[float]] = field(default_factory=lambda: {t: [] for t in TOOLS})
    http_status: Counter[int] = field(default_factory=Counter)
    busy_retries: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    error_samples: list[str] = field(default_factory=list)
    written: dict[str, tuple[str, str]] = field(default_factory=dict)  # id → (scope, content)
    matched: int = 0
    recall_hits: int = 0
    cycles_ok: int = 0
    cycles_failed: int = 0

    async def on_response(self, response: httpx2.Response) -> None:
        self.http_status[response.status_code] += 1

    def error(self, tool: str, code: str, detail: str) -> None:
        self.errors[f"{tool}:{code}"] += 1
        if len(self.error_samples) < ERROR_SAMPLES:
            self.error_samples.append(f"{tool}: {code}: {detail[:300]}")


class Ready:
    """Counts agents whose MCP session is up (or failed); `all` is set once every one is."""

    def __init__(self, agents: int) -> None:
        self.agents = agents
        self.all = anyio.Event()
        self._arrived: set[int] = set()

    def arrive(self, agent: int) -> None:
        self._arrived.add(agent)
        if len(self._arrived) == self.agents:
            self.all.set()


@dataclass(frozen=True)
class Plan:
    """Names for one phase: distinct per run and phase, so nothing written is a duplicate."""

    run: str
    agents: int

    def scope(self, agent: int, cycle: int) -> str:
        if cycle % SHARED_EVERY == SHARED_EVERY - 1:
            return f"project:load-{self.run}-n{self.agents}-shared"
        return f"project:load-{self.run}-n{self.agents}-a{agent}"

    def facts(self, agent: int, cycle: int) -> tuple[str, list[dict[str, str]], str]:
        """(topic, memories to remember, recall query) for one cycle."""
        seed = agent * 7919 + cycle * 104729
        subject = SUBJECTS[seed % len(SUBJECTS)]
        part = PARTS[(seed // 3) % len(PARTS)]
        service = f"svc{self.run}n{self.agents}a{agent}c{cycle}"
        topic = f"the {subject} {part} of service {service}"
        memories = []
        for k in range(FACTS_PER_CYCLE):
            claim = CLAIMS[(seed + k) % len(CLAIMS)].format(
                n=2 + (seed + 31 * k) % 498, o=OBJECTS[(seed + k) % len(OBJECTS)]
            )
            memories.append(
                {"content": f"The {topic[4:]} {claim}.", "type": FACT_TYPES[k % len(FACT_TYPES)]}
            )
        return topic, memories, f"How is {topic} set up and what does it depend on?"


class Agent:
    """One MCP client (its own HTTP client and MCP session) running cycles one after another."""

    def __init__(self, *, index: int, url: str, plan: Plan, tally: Tally) -> None:
        self.index, self.url, self.plan, self.tally = index, url, plan, tally
        self.known: set[str] = set()  # ids this agent wrote: what it would mark as used
        self.session: ClientSession | None = None

    async def run(self, cycles: int, ready: Ready, start: anyio.Event) -> None:
        """Initialize, report ready, wait for the common start, then run `cycles` cycles."""
        done = 0
        timeout = httpx2.Timeout(30.0, read=CALL_TIMEOUT_SECONDS)
        hooks = {"response": [self.tally.on_response]}
        try:
            async with (
                httpx2.AsyncClient(timeout=timeout, event_hooks=hooks) as http,
                streamable_http_client(f"{self.url}/mcp", http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                self.session = session
                await session.initialize()
                ready.arrive(self.index)
                await start.wait()
                for cycle in range(cycles):
                    ok = await self.cycle(cycle)
                    done += 1
                    if ok:
                        self.tally.cycles_ok += 1
                    else:
                        self.tally.cycles_failed += 1
        except Exception as exc:  # a broken MCP session: the cycles it did not run failed
            self.tally.error("session", type(exc).__name__, str(exc))
            self.tally.cycles_failed += cycles - done
        finally:
            ready.arrive(self.index)

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """The envelope's data, or None after recording the error; storage_busy is retried."""
        assert self.session is not None
        started = time.perf_counter()
        for attempt in range(BUSY_RETRIES + 1):
            try:
                result = await self.session.call_tool(
                    f"slowave_{tool}", arguments, read_timeout_seconds=CALL_TIMEOUT_SECONDS
                )
            except Exception as exc:  # transport failure or a JSON-RPC error (e.g. on a 5xx)
                self.tally.error(tool, f"transport:{type(exc).__name__}", str(exc))
                return None
            envelope = getattr(result, "structured_content", None)
            if not isinstance(envelope, dict) or not isinstance(envelope.get("ok"), bool):
                self.tally.error(tool, "bad_envelope", repr(result))
                return None
            if envelope["ok"]:
                self.tally.latency_ms[tool].append((time.perf_counter() - started) * 1000)
                return envelope["data"]
            error = envelope.get("error") or {}
            if error.get("code") == "storage_busy" and attempt < BUSY_RETRIES:
                self.tally.busy_retries[tool] += 1
                await anyio.sleep(BUSY_BACKOFF_SECONDS * 2**attempt)
                continue
            self.tally.error(tool, str(error.get("code")), str(error.get("message")))
            return None
        return None  # unreachable: the last attempt records its error and returns

    async def cycle(self, cycle: int) -> bool:
        scope = self.plan.scope(self.index, cycle)
        topic, memories, query = self.plan.facts(self.index, cycle)
        opened = await self.call(
            "activate",
            {
                "task": f"Document {topic}",
                "initial_goal": f"record how {topic} works",
                "scope": scope,
            },
        )
        if opened is None:
            return False
        session = {"session_id": opened["session_id"], "scope": scope}
        stored = await self.call("remember", {**session, "memories": memories})
        if stored is None:
            return False
        mine = self._stored(stored, scope, memories)
        recalled = await self.call("recall", {**session, "query": query})
        if recalled is None:
            return False
        if mine & {m["memory_id"] for m in recalled["memories"]}:
            self.tally.recall_hits += 1
        fed = await self.call(
            "feedback",
            {"items": [_assessment(opened, self.known), _assessment(recalled, mine | self.known)]},
        )
        if fed is None or not self._feedback_clean(fed):
            return False
        self.known |= mine
        committed = await self.call("commit", self._commit(opened["session_id"], topic, cycle))
        return committed is not None and committed.get("committed") is True

    def _stored(
        self, stored: dict[str, Any], scope: str, memories: list[dict[str, str]]
    ) -> set[str]:
        ids = set()
        for item in stored["results"]:
            if not item["ok"]:
                self.tally.error("remember", item["error"]["code"], item["error"]["message"])
                continue
            data = item["data"]
            ids.add(data["memory_id"])
            if data["disposition"] == "matched":
                self.tally.matched += 1  # distinct texts: a match would be a dedup bug
            else:
                self.tally.written[data["memory_id"]] = (scope, memories[item["index"]]["content"])
        return ids

    def _feedback_clean(self, fed: dict[str, Any]) -> bool:
        clean = True
        for item in fed["results"]:
            if not item["ok"]:
                self.tally.error("feedback", item["error"]["code"], item["error"]["message"])
                clean = False
            elif item["data"]["rejected"]:
                self.tally.error("feedback", "rejected", str(item["data"]["rejected"]))
                clean = False
        return clean

    def _commit(self, session_id: str, topic: str, cycle: int) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "session_id": session_id,
            "final_goal": f"record how {topic} works",
            "outcome": "success",
            "outcome_summary": f"Recorded {FACTS_PER_CYCLE} facts about {topic}.",
            "verification": {"status": "verified", "summary": "recall found the new facts"},
        }
        if cycle % PROCEDURE_EVERY == 0:
            arguments["procedure"] = {
                "summary": f"How agent {self.index} documents a service",
                "steps": [{"summary": "activate"}, {"summary": "remember each durable fact"}],
                "deduplication_key": f"load.agent-{self.index}",
            }
        return arguments


def _assessment(shown: dict[str, Any], used: set[str]) -> dict[str, Any]:
    """Complete feedback on one retrieval: what the agent wrote was used, the rest irrelevant."""
    record: dict[str, Any] = {"retrieval_id": shown["retrieval_id"], "coverage": "complete"}
    memories = [
        {
            "memory_id": m["memory_id"],
            "assessment": "used" if m["memory_id"] in used else "irrelevant",
        }
        for m in shown.get("memories", [])
    ]
    procedures = [
        {"procedure_id": p["procedure_id"], "use": "not_used"} for p in shown.get("procedures", [])
    ]
    if memories:
        record["memory_feedback"] = memories
    if procedures:
        record["procedure_feedback"] = procedures
    return record
