"""Slowave's data model (spec §5): fields, choices and constraints only."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Session(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        ENDED = "ended"

    class EndedBy(models.TextChoices):
        COMMIT = "commit"
        REAPER = "reaper"
        IMPORT = "import"
        SYSTEM = "system"

    class Outcome(models.TextChoices):
        SUCCESS = "success"
        PARTIAL = "partial"
        FAILURE = "failure"
        UNKNOWN = "unknown"

    class FeedbackStatus(models.TextChoices):
        COMPLETE = "complete"
        INCOMPLETE = "incomplete"
        NOT_REQUIRED = "not_required"

    class EpisodesState(models.TextChoices):
        PENDING = "pending"
        FORMING = "forming"
        FORMED = "formed"

    id = models.CharField(primary_key=True, max_length=40)
    scope = models.CharField(max_length=200, db_index=True)
    scope_kind = models.CharField(max_length=100)
    continuity = models.ForeignKey("Continuity", null=True, blank=True, on_delete=models.PROTECT)
    task = models.TextField()
    initial_goal = models.TextField()
    task_context = models.JSONField(default=dict, blank=True)
    semantic_context = models.TextField(blank=True, default="")
    client_name = models.CharField(max_length=200, blank=True, default="")
    client_version = models.CharField(max_length=200, blank=True, default="")
    client_identity = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    started_at = models.DateTimeField()
    last_activity_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_by = models.CharField(max_length=10, choices=EndedBy.choices, blank=True, default="")
    final_goal = models.TextField(blank=True, default="")
    outcome = models.CharField(max_length=10, choices=Outcome.choices, blank=True, default="")
    outcome_summary = models.TextField(blank=True, default="")
    verification = models.JSONField(default=dict, blank=True)
    feedback_status = models.CharField(
        max_length=15, choices=FeedbackStatus.choices, blank=True, default=""
    )
    episodes_state = models.CharField(
        max_length=10, choices=EpisodesState.choices, default=EpisodesState.PENDING
    )
    import_key = models.CharField(max_length=200, null=True, blank=True)
    # Under SLOWAVE_SECRETS=redact: field path → {kind: count} of the credentials replaced in
    # what this session's commit or import stored (memory.secrets); never the values.
    redactions = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "import_key"],
                condition=Q(import_key__isnull=False),
                name="session_unique_import_key",
            )
        ]
        indexes = [models.Index(fields=["status", "last_activity_at"])]

    def __str__(self) -> str:
        return self.id


class Event(models.Model):
    class Kind(models.TextChoices):
        TASK_STARTED = "task_started"
        USER_MESSAGE = "user_message"
        ASSISTANT_MESSAGE = "assistant_message"
        SYSTEM_MESSAGE = "system_message"
        TOOL_MESSAGE = "tool_message"
        REMEMBER = "remember"
        RECALL_QUERY = "recall_query"
        FEEDBACK = "feedback"
        TRAJECTORY_ACTION = "trajectory_action"
        TRAJECTORY_OBSERVATION = "trajectory_observation"
        PROCEDURE = "procedure"
        OUTCOME = "outcome"

    session = models.ForeignKey(Session, on_delete=models.PROTECT, related_name="events")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=30, choices=Kind.choices)
    role = models.CharField(max_length=20, blank=True, default="")
    content = models.TextField(blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    recorded_at = models.DateTimeField()
    occurred_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["session", "seq"], name="event_unique_seq")]

    @property
    def public_id(self) -> str:
        return f"evt_{self.pk}"

    def __str__(self) -> str:
        return self.public_id


class Continuity(models.Model):
    id = models.CharField(primary_key=True, max_length=100)
    scope = models.CharField(max_length=200)
    integration = models.CharField(max_length=200, blank=True, default="")
    client_identity = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "continuities"

    def __str__(self) -> str:
        return self.id


class MemoryType(models.TextChoices):
    FACT = "fact"
    PREFERENCE = "preference"
    DECISION = "decision"
    CONSTRAINT = "constraint"
    INSTRUCTION = "instruction"
    LESSON = "lesson"
    WARNING = "warning"
    OPEN_QUESTION = "open_question"
    TASK = "task"
    ARTIFACT = "artifact"


class Memory(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        STALE = "stale"
        ARCHIVED = "archived"
        FORGOTTEN = "forgotten"

    class Origin(models.TextChoices):
        EXPLICIT = "explicit"
        CONSOLIDATED = "consolidated"
        IMPORTED = "imported"

    type = models.CharField(max_length=20, choices=MemoryType.choices)
    content = models.TextField()
    normalized_hash = models.CharField(max_length=64, db_index=True)
    scope = models.CharField(max_length=200, db_index=True)
    scope_kind = models.CharField(max_length=100)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    origin = models.CharField(max_length=15, choices=Origin.choices, default=Origin.EXPLICIT)
    generalization_stage = models.PositiveSmallIntegerField(default=0)
    salience = models.FloatField(default=1.4)
    stale_reason = models.CharField(max_length=20, blank=True, default="")
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="supersedes"
    )
    duplicate_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="duplicates"
    )
    prototype = models.ForeignKey(
        "Prototype", null=True, blank=True, on_delete=models.SET_NULL, related_name="memories"
    )
    source_session = models.ForeignKey(Session, null=True, blank=True, on_delete=models.PROTECT)
    source_event = models.ForeignKey(Event, null=True, blank=True, on_delete=models.PROTECT)
    occurred_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    last_decayed_at = models.DateTimeField(null=True, blank=True)
    embedded_at = models.DateTimeField(null=True, blank=True)
    embedding = models.BinaryField(null=True, blank=True, editable=False)
    # One float32 vector per sentence of a longer memory (memory.passages): NULL until
    # embedded, empty for a memory of one sentence.
    passages = models.BinaryField(null=True, blank=True, editable=False)
    # False while only the leading passages are embedded (a remember call embeds at most
    # memory.passages.REMEMBER_PASSAGES); the embeddings backfill pass embeds the rest.
    passages_complete = models.BooleanField(default=True)
    provenance = models.JSONField(default=dict, blank=True)
    flags = models.JSONField(default=dict, blank=True)
    # Under SLOWAVE_SECRETS=redact: field path → {kind: count} of the credentials replaced in
    # the content as remembered (memory.secrets); never the values.
    redactions = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name_plural = "memories"
        constraints = [
            models.CheckConstraint(
                condition=Q(salience__gte=0.01) & Q(salience__lte=20), name="memory_salience_range"
            ),
            models.CheckConstraint(
                condition=Q(generalization_stage__gte=0) & Q(generalization_stage__lte=3),
                name="memory_stage_range",
            ),
            models.UniqueConstraint(
                fields=["scope", "normalized_hash"],
                condition=Q(status="active"),
                name="memory_unique_active_hash",
            ),
        ]
        indexes = [
            models.Index(fields=["scope", "status"]),
            models.Index(fields=["scope", "occurred_at"]),
            models.Index(fields=["generalization_stage", "status"]),
            # A scope's remembering sessions, one index seek each (retrieval.scope_facts).
            models.Index(fields=["scope", "source_session"], name="memory_scope_sessions"),
            models.Index(
                fields=["scope"],
                condition=Q(passages_complete=False),
                name="memory_passages_pending",
            ),
        ]

    @property
    def public_id(self) -> str:
        return f"sch_{self.pk}"

    def __str__(self) -> str:
        return self.public_id


class Episode(models.Model):
    session = models.ForeignKey(Session, on_delete=models.PROTECT, related_name="episodes")
    scope = models.CharField(max_length=200, db_index=True)
    content = models.TextField()
    first_event = models.ForeignKey(Event, on_delete=models.PROTECT, related_name="+")
    event_ids = models.JSONField(default=list)
    recorded_at = models.DateTimeField()
    occurred_at = models.DateTimeField(null=True, blank=True)
    salience = models.FloatField(default=1.0)
    prototype = models.ForeignKey(
        "Prototype", null=True, blank=True, on_delete=models.SET_NULL, related_name="episodes"
    )
    embedded_at = models.DateTimeField(null=True, blank=True)
    embedding = models.BinaryField(null=True, blank=True, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "first_event"], name="episode_unique_first")
        ]

    @property
    def public_id(self) -> str:
        return f"ep_{self.pk}"

    def __str__(self) -> str:
        return self.public_id


class Support(models.Model):
    class Kind(models.TextChoices):
        SOURCE_EVENT = "source_event"
        SOURCE_EPISODE = "source_episode"
        CORROBORATION = "corroboration"
        REPEAT = "repeat"
        CONSOLIDATED_MEMBER = "consolidated_member"

    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="supports")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    event = models.ForeignKey(Event, null=True, blank=True, on_delete=models.PROTECT)
    episode = models.ForeignKey(Episode, null=True, blank=True, on_delete=models.PROTECT)
    session = models.ForeignKey(Session, null=True, blank=True, on_delete=models.PROTECT)
    scope = models.CharField(max_length=200)
    weight = models.FloatField(default=1.0)
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.kind} for sch_{self.memory_id}"


class Prototype(models.Model):
    scope = models.CharField(max_length=200, db_index=True)
    centroid = models.BinaryField(editable=False)
    vector_sum = models.BinaryField(editable=False)
    support_count = models.PositiveIntegerField(default=0)
    session_count = models.PositiveIntegerField(default=0)
    medoid_episode = models.ForeignKey(
        Episode, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    memory = models.ForeignKey(
        Memory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    @property
    def public_id(self) -> str:
        return f"pro_{self.pk}"

    def __str__(self) -> str:
        return self.public_id


class Association(models.Model):
    class Kind(models.TextChoices):
        SEMANTIC = "semantic"
        TEMPORAL = "temporal"
        COOCCURRENCE = "cooccurrence"

    src = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    dst = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=15, choices=Kind.choices)
    weight = models.FloatField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(src__lt=models.F("dst")), name="assoc_ordered"),
            models.CheckConstraint(
                condition=Q(weight__gte=0) & Q(weight__lte=1), name="assoc_weight_range"
            ),
            models.UniqueConstraint(fields=["src", "dst", "kind"], name="assoc_unique"),
        ]

    def __str__(self) -> str:
        return f"sch_{self.src_id} -{self.kind}- sch_{self.dst_id}"


class Procedure(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        SUPERSEDED = "superseded"
        FORGOTTEN = "forgotten"

    id = models.CharField(primary_key=True, max_length=60)
    # Integer key for the vector and FTS tables, which are rowid-addressed.
    index_key = models.BigIntegerField(unique=True)
    session = models.OneToOneField(Session, on_delete=models.PROTECT, related_name="procedure")
    scope = models.CharField(max_length=200, db_index=True)
    goal = models.TextField()
    summary = models.TextField()
    context = models.JSONField(default=dict, blank=True)
    steps = models.JSONField(default=list)
    caveats = models.JSONField(default=list, blank=True)
    outcome = models.CharField(max_length=10)
    outcome_summary = models.TextField(blank=True, default="")
    deduplication_key = models.CharField(max_length=64, null=True, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    prior_status = models.CharField(max_length=12, blank=True, default="")
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField()
    embedded_at = models.DateTimeField(null=True, blank=True)
    embedding = models.BinaryField(null=True, blank=True, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "deduplication_key"],
                condition=Q(status="active") & Q(deduplication_key__isnull=False),
                name="procedure_unique_active_key",
            )
        ]

    def __str__(self) -> str:
        return self.id


class Retrieval(models.Model):
    class Kind(models.TextChoices):
        ACTIVATE = "activate"
        RECALL = "recall"

    id = models.CharField(primary_key=True, max_length=20)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    session = models.ForeignKey(Session, on_delete=models.PROTECT, related_name="retrievals")
    scope = models.CharField(max_length=200, db_index=True)
    query = models.TextField()
    facets = models.JSONField(default=list)
    policy_version = models.CharField(max_length=40)
    catalog = models.JSONField(default=dict)
    relevant_total = models.PositiveIntegerField(default=0)
    catalog_truncated = models.BooleanField(default=False)
    evidence_mode = models.CharField(max_length=12, default="references")
    params = models.JSONField(default=dict)
    embedder = models.CharField(max_length=100)
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.id


class Cursor(models.Model):
    id = models.CharField(primary_key=True, max_length=40)
    retrieval = models.ForeignKey(Retrieval, on_delete=models.PROTECT, related_name="cursors")
    memory_offset = models.PositiveIntegerField()
    procedure_offset = models.PositiveIntegerField()
    page = models.PositiveIntegerField()

    def __str__(self) -> str:
        return self.id


class TargetKind(models.TextChoices):
    MEMORY = "memory"
    PROCEDURE = "procedure"
    RETRIEVAL = "retrieval"


class Exposure(models.Model):
    class Pathway(models.TextChoices):
        DIRECT = "direct"
        ASSOCIATED = "associated"

    class Currency(models.TextChoices):
        CURRENT = "current"
        HISTORICAL = "historical"

    retrieval = models.ForeignKey(Retrieval, on_delete=models.PROTECT, related_name="exposures")
    target_kind = models.CharField(max_length=10, choices=TargetKind.choices)
    target_id = models.CharField(max_length=60)
    pathway = models.CharField(max_length=12, choices=Pathway.choices)
    currency = models.CharField(max_length=12, choices=Currency.choices)
    rank = models.PositiveIntegerField()
    page = models.PositiveIntegerField()
    scores = models.JSONField(default=dict)
    exposed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["retrieval", "target_kind", "target_id"], name="exposure_unique_target"
            )
        ]
        indexes = [models.Index(fields=["target_kind", "target_id"])]

    def __str__(self) -> str:
        return f"{self.retrieval_id}:{self.target_id}"


class FeedbackEvent(models.Model):
    class Status(models.TextChoices):
        ACCEPTED = "accepted"
        REJECTED = "rejected"

    id = models.CharField(primary_key=True, max_length=40)
    retrieval = models.ForeignKey(Retrieval, on_delete=models.PROTECT, related_name="feedback")
    target_kind = models.CharField(max_length=10, choices=TargetKind.choices)
    target_id = models.CharField(max_length=60)
    status = models.CharField(max_length=10, choices=Status.choices)
    rejection_reason = models.CharField(max_length=60, blank=True, default="")
    assessment = models.CharField(max_length=20, blank=True, default="")
    relevance = models.CharField(max_length=20, blank=True, default="")
    effect = models.CharField(max_length=20, blank=True, default="")
    stale_reason = models.CharField(max_length=20, blank=True, default="")
    replacement_memory_id = models.CharField(max_length=40, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    use = models.CharField(max_length=10, blank=True, default="")
    contribution = models.TextField(blank=True, default="")
    coverage = models.CharField(max_length=10, blank=True, default="")
    retrieval_quality = models.TextField(blank=True, default="")
    missing = models.JSONField(default=list, blank=True)
    refines_event = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["retrieval", "target_kind", "target_id"])]

    def __str__(self) -> str:
        return self.id


class LearningApplication(models.Model):
    retrieval = models.ForeignKey(Retrieval, on_delete=models.PROTECT, related_name="+")
    target_kind = models.CharField(max_length=10, choices=TargetKind.choices)
    target_id = models.CharField(max_length=60)
    applied_event = models.ForeignKey(FeedbackEvent, on_delete=models.PROTECT, related_name="+")
    applied_delta = models.FloatField(default=0.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["retrieval", "target_kind", "target_id"], name="learning_unique_target"
            )
        ]


class ForgetLog(models.Model):
    class Action(models.TextChoices):
        FORGET = "forget"
        UNFORGET = "unforget"
        REACTIVATE = "reactivate"
        RESET_GENERALIZATION = "reset_generalization"

    memory = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.PROTECT)
    procedure = models.ForeignKey(Procedure, null=True, blank=True, on_delete=models.PROTECT)
    action = models.CharField(max_length=25, choices=Action.choices)
    prior_status = models.CharField(max_length=12)
    new_status = models.CharField(max_length=12)
    reason = models.TextField(blank=True, default="")
    actor = models.CharField(max_length=150)
    created_at = models.DateTimeField()


class WorkerRun(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    class TriggeredBy(models.TextChoices):
        BEAT = "beat"
        EMBEDDED = "embedded"
        CLI = "cli"
        COMMIT = "commit"
        TEST = "test"

    pass_name = models.CharField(max_length=40)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    triggered_by = models.CharField(max_length=10, choices=TriggeredBy.choices)
    scope = models.CharField(max_length=200, blank=True, default="")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")


class PassLock(models.Model):
    name = models.CharField(primary_key=True, max_length=60)
    holder = models.CharField(max_length=100, blank=True, default="")
    expires_at = models.DateTimeField(null=True, blank=True)


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)


class VectorRow(models.Model):
    """The numpy vector backend's store (spec §4): one row per indexed vector, append-ordered.

    An upsert replaces a key's rows with a new one (a new, higher id); a delete leaves a row
    without an embedding (a tombstone). Processes keep an in-memory matrix and read only the
    rows with ids above what they have already applied.
    """

    kind = models.CharField(max_length=12)
    row_id = models.BigIntegerField()
    scope = models.CharField(max_length=200)
    embedding = models.BinaryField(null=True, editable=False)

    class Meta:
        indexes = [models.Index(fields=["kind", "row_id"], name="vectorrow_kind_row")]


class VectorStamp(models.Model):
    """Per-kind write counter for VectorRow. Writers bump it before inserting, which takes a row
    lock on PostgreSQL, so row ids of one kind become visible in id order."""

    kind = models.CharField(primary_key=True, max_length=12)
    version = models.BigIntegerField(default=0)


class StoreEmbedder(models.Model):
    """Which embedder wrote this store's vectors (one row, id 1; memory.embedder_record).

    Written by the first encode on a store without vectors, read by every process before it
    encodes: vectors of two embedders never share one store. A store migrated with vectors and
    no record was written by the only embedder there was then, fp32 (migration 0014)."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    name = models.CharField(max_length=200)
    precision = models.CharField(max_length=12)  # fp32 | int8 | hash
    digest = models.CharField(max_length=64, blank=True)  # sha256 of the weights, if known
    recorded_at = models.DateTimeField()
    recorded_by = models.CharField(max_length=40)  # first_encode | existing_store

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(id=1), name="store_embedder_single")]

    def __str__(self) -> str:
        return f"{self.name} ({self.precision})"
