"""Each ranking signal on the real model and database; every test fails if its signal is removed."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import Association, Memory
from memory.retrieval import signals, speakers
from memory.retrieval.engine import rank
from memory.retrieval.policy import DEFAULT_POLICY, RankingPolicy
from memory.schemas import ActivateIn, RecallIn, RememberIn
from memory.services.activate import session_activate
from memory.services.recall import retrieval_recall
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo

pytestmark = pytest.mark.django_db
SCOPE = "project:signals"


def _store(items: list[dict]) -> tuple[str, list[int]]:
    opened = session_activate(
        data=ActivateIn(task="seed", initial_goal="g", scope=SCOPE),
        client=ClientInfo(),
        now=timezone.now(),
    )
    reply = memory_remember(
        data=RememberIn(scope=SCOPE, session_id=opened["session_id"], memories=items),
        now=timezone.now(),
    )
    return opened["session_id"], [int(r["data"]["memory_id"][4:]) for r in reply["results"]]


def _facts(*lines: str) -> list[int]:
    """One session remembering the lines as facts, in order; their memory pks."""
    return _store([{"content": line, "type": "fact"} for line in lines])[1]


# The other signals' tests tell near-identical lines apart in separate sessions; the
# supersession demotion would read each newer line as an update of the older and reorder them.
ALONE = replace(DEFAULT_POLICY, supersession=replace(DEFAULT_POLICY.supersession, weight=0.0))


def _ranked(cue: str, kind: str = "recall", policy: RankingPolicy | None = None) -> list[int]:
    ranking = rank(scope=SCOPE, cue=cue, kind=kind, now=timezone.now(), policy=policy)
    return [it.obj.pk for it in ranking.memories]


def _without(group: str, **values: float) -> RankingPolicy:
    """The default policy with some values of one group changed."""
    return replace(DEFAULT_POLICY, **{group: replace(getattr(DEFAULT_POLICY, group), **values)})


def _alone(group: str, **values: float) -> RankingPolicy:
    """ALONE with some values of one group changed."""
    return replace(ALONE, **{group: replace(getattr(ALONE, group), **values)})


def test_it_drops_everything_below_the_relevance_floor(settings):
    _store(
        [
            {"content": "The API gateway is written in Go", "type": "fact"},
            {"content": "Unit tests run with pytest in CI", "type": "fact"},
        ]
    )
    assert _ranked("Choose a paint colour for the office lobby walls") == []
    settings.SLOWAVE_MIN_RELEVANCE = 0.0
    assert _ranked("Choose a paint colour for the office lobby walls") != []


def test_it_prefers_items_inside_a_temporal_cue_window():
    now = timezone.now()
    _, (old, new) = _store(
        [
            {
                "content": "Checkout database incident: the disk filled up",
                "type": "fact",
                "occurred_at": (now - timedelta(days=7)).isoformat(),
            },
            {
                "content": "Checkout database incident: the connection pool ran dry",
                "type": "fact",
                "occurred_at": (now - timedelta(days=1)).isoformat(),
            },
        ]
    )
    assert _ranked("What incident hit the checkout database last week?")[0] == old
    assert _ranked("What incident hit the checkout database yesterday?")[0] == new
    timeless = _without("terms", in_window=0.0, out_of_window=0.0)
    cue = "What incident hit the checkout database last week?"
    ranking = rank(scope=SCOPE, cue=cue, kind="recall", now=now, policy=timeless)
    assert all("temporal" not in dict(it.signals) for it in ranking.memories)


def test_it_answers_every_facet_of_a_multi_part_task():
    _, (port, db, owner, _noise) = _store(
        [
            {"content": "The web server listens on port 8443", "type": "fact"},
            {"content": "Customer data is stored in PostgreSQL 16", "type": "fact"},
            {"content": "The on-call owner for payments is Dana", "type": "fact"},
            {"content": "The marketing site uses a purple colour palette", "type": "fact"},
        ]
    )
    task = (
        "Prepare the runbook:\n1. Which port does the web server listen on?\n"
        "2. Which database stores customer data?\n3. Who is the on-call owner for payments?"
    )
    assert set(_ranked(task, kind="activate")) == {port, db, owner}


def test_it_rewards_agreement_of_the_dense_and_lexical_channels():
    policy = DEFAULT_POLICY
    assert (
        signals.rrf(1, 1, policy) > signals.rrf(1, None, policy) > signals.rrf(None, None, policy)
    )
    both = signals.FacetEvidence(
        cos=0.5, coverage=0.5, rrf=signals.rrf(1, 1, policy), salience=1.4, temporal=0
    )
    one = replace(both, rrf=signals.rrf(1, None, policy))
    assert sum(v for _, v in signals.base(both, policy)) > sum(
        v for _, v in signals.base(one, policy)
    )
    flat = _without("terms", rrf_weight=0.0)
    assert sum(v for _, v in signals.base(both, flat)) == sum(v for _, v in signals.base(one, flat))


def test_it_shows_strong_neighbours_as_associated_items():
    # Stored in separate sessions so that only the edge, not turn adjacency, links them.
    session_id, (first,) = _store(
        [
            {
                "content": "The nightly export job writes CSV files to the reports bucket",
                "type": "fact",
            }
        ]
    )
    _, (second,) = _store(
        [{"content": "Those uploads are encrypted with the shared team key", "type": "fact"}]
    )
    Association.objects.create(
        src_id=first, dst_id=second, kind="temporal", weight=0.5, updated_at=timezone.now()
    )
    reply = retrieval_recall(
        data=RecallIn(
            session_id=session_id,
            scope=SCOPE,
            query="Where does the nightly export job write its CSV files?",
        ),
        now=timezone.now(),
    )
    pathways = {m["memory_id"]: m["pathway"] for m in reply["memories"]}
    assert pathways.get(f"sch_{first}") == "direct"
    assert pathways.get(f"sch_{second}") == "associated"
    assert reply["relevant_total"] == 1


def test_it_reads_neighbouring_turns_as_context_in_recall():
    session_id, (_before, asked, answer, _after) = _store(
        [
            {"content": "Tim: I joined a fantasy literature forum last night", "type": "fact"},
            {
                "content": "John: Which fantasy novels do you enjoy writing about the most?",
                "type": "fact",
            },
            {
                "content": "Tim: Harry Potter and Game of Thrones, "
                "I could chat about them forever!",
                "type": "fact",
            },
            {
                "content": "John: My knee is finally better so I am back on the court",
                "type": "fact",
            },
        ]
    )
    reply = retrieval_recall(
        data=RecallIn(
            session_id=session_id,
            scope=SCOPE,
            query="Which fantasy novels does Tim enjoy writing about?",
        ),
        now=timezone.now(),
    )
    shown = [m["memory_id"] for m in reply["memories"]]
    assert f"sch_{asked}" in shown and f"sch_{answer}" in shown
    cue = "Which fantasy novels does Tim enjoy writing about?"

    def context_of(policy: RankingPolicy) -> float:
        ranking = rank(scope=SCOPE, cue=cue, kind="recall", now=timezone.now(), policy=policy)
        (item,) = [it for it in ranking.memories if it.obj.pk == answer]
        return dict(item.signals).get("context", 0.0)

    assert context_of(DEFAULT_POLICY) > 0
    assert context_of(_without("recall", context_weight=0.0)) == 0
    only_own = rank(
        scope=SCOPE,
        cue="Which fantasy novels does Tim enjoy writing about?",
        kind="activate",
        now=timezone.now(),
    )
    assert answer not in [it.obj.pk for it in only_own.memories]


def test_it_demotes_stale_memories_behind_current_ones():
    _, (old, new) = _store(
        [
            {"content": "Deployments go out on Tuesdays", "type": "decision"},
            {"content": "Deployments go out on Thursdays", "type": "decision"},
        ]
    )
    Memory.objects.filter(pk=old).update(status="stale", superseded_by_id=new)
    order = _ranked("Which day do deployments go out?")
    assert order == [new, old]


def test_it_orders_by_what_was_said_not_by_who_is_named(monkeypatch):
    # Greetings carry little but the two names, which alone pull a question naming both close
    # in embedding space; speaker names are left out of the vector that orders items.
    # One session per line, so that no neighbouring turn lends context.
    lines = [
        "Joanna: Bye Nate!",
        "Nate: See you later Joanna!",
        "Joanna: Hey Nate, how are you?",
        "Nate: Hi Joanna, so good to hear from you!",
        "Joanna: I just saw Little Women, a lovely movie about sisterhood",
        "Nate: My turtles are doing great these days",
        "Joanna: Work on my screenplay is going well",
        "Nate: I won a video game tournament",
    ]
    pks = [_store([{"content": line, "type": "fact"}])[1][0] for line in lines]
    question = "Which film did Joanna watch with Nate?"
    assert _ranked(question)[0] == pks[4]
    monkeypatch.setattr(speakers, "without_speakers", lambda text, names: text)
    assert _ranked(question)[0] != pks[4]


def test_it_prefers_a_turn_whose_session_matches_too():
    # Two near-equal answers; the one told in a session that also matches elsewhere comes first.
    in_session = _facts(
        "Tim: I'm training for the Boston marathon in April",
        "John: How is the training going?",
        "Tim: My marathon plan has long runs every Sunday",
        "John: Nice, I bought a new bike last week",
        "Tim: yesterday was a great day",
    )
    alone = _facts(
        "Tim: I went to the bookshop",
        "John: Did you find the novel you wanted?",
        "Tim: I had a great day yesterday",
    )
    question = "Did Tim have a good day yesterday?"
    assert _ranked(question, policy=ALONE)[0] == in_session[-1]
    assert _ranked(question, policy=_alone("recall", session_weight=0.0))[0] == alone[-1]


def test_it_reads_a_turn_two_steps_from_a_match_as_context():
    # Two near-equal answers; the one told two turns after a strong match comes first.
    near = _facts(
        "Tim: I signed up for the Boston marathon in April",
        "John: Wow, good luck with that!",
        "Tim: The race starts at 7 am",
    )
    far = _facts(
        "Tim: I signed up for the Chicago marathon in October",
        "John: That is brave of you!",
        "John: Anyway, how is your garden doing?",
        "Tim: The race starts at 8 am",
    )
    question = "What time does Tim's marathon race start?"
    ranking = rank(
        scope=SCOPE, cue=question, kind="recall", now=timezone.now(), policy=ALONE
    ).memories
    by_pk = {it.obj.pk: it for it in ranking}
    assert by_pk[near[-1]].context == pytest.approx(0.5 * by_pk[near[0]].topical)
    assert ranking[0].obj.pk == near[-1]
    assert _ranked(question, policy=_alone("recall", far_share=0.0))[0] == far[-1]


def test_it_reads_the_turn_after_a_matching_question_as_its_answer():
    # Two near-equal answers after equally strong matches; the one that replies to a question
    # about the cue comes first.
    told = _facts(
        "John: I support my basketball team at every home game",
        "Tim: The Lakers are solid this year",
    )
    asked = _facts(
        "John: Which basketball team do you support?",
        "Tim: The Wolves are solid this year",
    )
    question = "Which basketball team does Tim support?"
    ranking = rank(
        scope=SCOPE, cue=question, kind="recall", now=timezone.now(), policy=ALONE
    ).memories
    by_pk = {it.obj.pk: it for it in ranking}
    reply_from = DEFAULT_POLICY.recall.reply_from
    assert by_pk[asked[1]].reply == pytest.approx(by_pk[asked[0]].topical - reply_from)
    assert by_pk[told[1]].reply == 0.0
    assert ranking.index(by_pk[asked[1]]) < ranking.index(by_pk[told[1]])
    order = _ranked(question, policy=_alone("recall", reply_weight=0.0))
    assert order.index(told[1]) < order.index(asked[1])


def test_it_ranks_the_newer_of_two_near_identical_claims_first():
    # A knowledge update nobody marked: the same instruction given twice, the later with a new
    # value. The older one matches the question's wording better; the newer must still lead.
    now = timezone.now()
    _, (old, new) = _store(
        [
            {
                "content": "Always start function argument names with the prefix 'e_'",
                "type": "preference",
                "occurred_at": (now - timedelta(days=40)).isoformat(),
            },
            {
                "content": "Function argument names should start with the prefix 'x_' from now on",
                "type": "preference",
                "occurred_at": (now - timedelta(days=20)).isoformat(),
            },
        ]
    )
    question = "Which prefix should function argument names always start with?"
    off = _alone("updates", weight=0.0)
    assert _ranked(question, policy=off)[:2] == [old, new]
    on = _alone("updates", weight=1.0)
    assert _ranked(question, policy=on)[:2] == [new, old]
    ranking = rank(scope=SCOPE, cue=question, kind="recall", now=now, policy=on)
    assert "newer" in dict(ranking.memories[0].signals)


def _demoted(question: str, pk: int, policy: RankingPolicy) -> bool:
    """Whether supersession moved memory `pk` for the recall `question` under `policy`."""
    ranking = rank(scope=SCOPE, cue=question, kind="recall", now=timezone.now(), policy=policy)
    return "superseded" in dict({it.obj.pk: it for it in ranking.memories}[pk].signals)


def _dated(*lines: tuple[str, int]) -> list[int]:
    """Facts told `days` ago each, in one session; their pks."""
    now = timezone.now()
    return _store(
        [
            {"content": text, "type": "fact", "occurred_at": (now - timedelta(days=d)).isoformat()}
            for text, d in lines
        ]
    )[1]


def test_it_places_an_older_version_below_the_newer_one():
    # An instruction updated later with a new value: the older wording matches the question
    # better, yet the update leads; an unrelated newer line on the subject is not lifted.
    old, other, new = _dated(
        ("Mentor: Always start function argument names with the prefix 'e_', it is our rule", 40),
        ("Mentor: I enjoyed the talk on naming things at the meetup last week", 30),
        ("Mentor: From now on, function argument names start with the prefix 'x_'", 20),
    )
    question = "Which prefix should function argument names always start with?"
    off = _without("supersession", weight=0.0)
    assert _ranked(question, policy=off).index(old) < _ranked(question, policy=off).index(new)
    on = _without("supersession", weight=1.0)
    order = _ranked(question, policy=on)
    assert order.index(new) < order.index(old)
    ranking = rank(scope=SCOPE, cue=question, kind="recall", now=timezone.now(), policy=on).memories
    by_pk = {it.obj.pk: it for it in ranking}
    assert "superseded" in dict(by_pk[old].signals)
    assert "superseded" not in dict(by_pk[new].signals)
    assert other not in by_pk or "superseded" not in dict(by_pk[other].signals)


def test_it_stems_query_terms_so_migrate_meets_migrations():
    # Coverage with Snowball stems: "migrate" in the cue meets "migrations" in the memory.
    (stemmed,) = _facts("Schema migrations run every night at two")
    question = "When do we migrate the schema?"

    def coverage(policy: RankingPolicy) -> float:
        ranking = rank(scope=SCOPE, cue=question, kind="recall", now=timezone.now(), policy=policy)
        return {it.obj.pk: it for it in ranking.memories}[stemmed].inputs["coverage"]

    assert coverage(_without("stemming", snowball=True)) == pytest.approx(1.0)
    assert coverage(DEFAULT_POLICY) < 0.7  # off by default: see policy.Stemming


def test_a_question_about_the_past_keeps_the_older_version_where_it_ranks():
    # Supersession reads the cue's tense: what was said back then is an event, not a rule
    # that a newer line replaced.
    old, _, new = _dated(
        ("Mentor: Always start function argument names with the prefix 'e_', it is our rule", 40),
        ("Mentor: I enjoyed the talk on naming things at the meetup last week", 30),
        ("Mentor: From now on, function argument names start with the prefix 'x_'", 20),
    )
    on = _without("supersession", weight=1.0)
    present = "Which prefix should function argument names always start with?"
    past = "Which prefix did the mentor first say function argument names always start with?"
    assert _ranked(present, policy=on).index(new) < _ranked(present, policy=on).index(old)
    order = _ranked(past, policy=on)
    assert order.index(old) < order.index(new)
    everywhere = replace(on, supersession=replace(on.supersession, present_only=False))
    order = _ranked(past, policy=everywhere)
    assert order.index(new) < order.index(old)


@pytest.mark.parametrize(
    ("cue", "past"),
    [
        ("Which prefix should function argument names start with?", False),
        ("What string must be included in method names?", False),
        ("Write tests for the CSV export and the refund endpoint", False),
        ("When is the standup?", False),
        ("When did we move the standup?", True),
        ("What did Caroline say about the adoption agency?", True),
        ("Where was the team offsite held?", True),
        ("Which book recommendation did Tim give to John?", True),
        ("What painting was finished three weeks ago?", True),
        ("Who organised the hackathon?", True),
    ],
)
def test_the_tense_of_a_cue_is_read_from_its_grammar(cue, past):
    from memory.retrieval.tense import asks_about_past

    assert asks_about_past(cue) is past


def test_recall_fills_its_page_below_the_floor_once_the_best_item_clearly_passes():
    # Separate sessions: a neighbouring turn would be admitted as context anyway.
    (strong,) = _facts("Deploys of the billing service go out through the blue-green pipeline")
    (weak,) = _facts("The payments team owns the invoice renderer")
    cue = "How do deploys of the billing service go out?"
    ranking = rank(scope=SCOPE, cue=cue, kind="recall", now=timezone.now())
    by_pk = {it.obj.pk: it for it in ranking.memories}
    assert ranking.memories[0].obj.pk == strong
    assert weak in by_pk and by_pk[weak].topical < DEFAULT_POLICY.admission.floor
    off = _without("depth", items=0)
    assert _ranked(cue, policy=off) == [strong]
    # Activation keeps its compact working set, and an unrelated cue still returns nothing.
    assert weak not in _ranked(cue, kind="activate")
    assert _ranked("Choose a paint colour for the office lobby walls") == []


def test_the_listeners_echo_of_an_older_version_is_placed_below_the_correction():
    # A colleague repeating the old rule back is as much an older version as the mentor's
    # own wording of it: the correction, said by the mentor, leads both.
    said, echo, new = _dated(
        ("Mentor: Always start function argument names with the prefix 'e_', it is our rule", 40),
        ("Colleague: Understood, I will start function argument names with the prefix 'e_'", 39),
        ("Mentor: From now on, function argument names start with the prefix 'x_'", 20),
    )
    question = "Which prefix should function argument names always start with?"
    gated = _without("supersession", weight=1.0, same_speaker=True)
    order = _ranked(question, policy=gated)
    assert order.index(echo) < order.index(new)
    order = _ranked(question)
    assert order.index(new) < order.index(echo)
    assert order.index(new) < order.index(said)


def test_a_question_asking_for_a_list_keeps_each_member_where_it_ranks():
    # "Which decorators ...?" asks for every one of them: a later addition to the list does
    # not replace the earlier one, however alike the two lines read.
    first, _, added = _dated(
        ("Mentor: Always add the decorator '@count_calls' to all methods, it is our rule", 40),
        ("Mentor: I enjoyed the talk on naming things at the meetup last week", 30),
        ("Mentor: From now on, add the decorator '@retry' to all methods", 20),
    )
    question = "Which decorators must I add to all methods?"

    assert _demoted(question, first, _without("supersession", single_only=False))
    assert not _demoted(question, first, DEFAULT_POLICY)


@pytest.mark.parametrize(
    ("cue", "many"),
    [
        ("Which decorators must I add to all methods?", True),
        ("Which modules must always be imported?", True),
        ("What prefix should function names start with?", False),
        ("What kind of commit messages should I write?", False),
        ("What is the status of the export?", False),
    ],
)
def test_a_cue_asking_for_a_list_is_read_from_its_grammar(cue, many):
    from memory.retrieval.tense import asks_for_many

    assert asks_for_many(cue) is many


def test_what_the_replaced_claims_session_said_on_it_goes_below_the_correction():
    # The listener's reply in the session of the old rule, read as no version of the
    # correction (at a sentence cosine of 0.70 its words are too far from it), is still of the
    # older state: once the old rule goes below the correction, its session-mate on the same
    # cue terms goes below with it.
    now = timezone.now()

    def told(days: int, *lines: str) -> list[int]:
        when = (now - timedelta(days=days)).isoformat()
        return _store([{"content": t, "type": "fact", "occurred_at": when} for t in lines])[1]

    rule, echo = told(
        40,
        "Mentor: At work we use Bitbucket as our version control system for every project",
        "Colleague: So we use Bitbucket for our version control system then. Noted.",
    )
    (new,) = told(20, "Mentor: From now on, use GitLab as our main version control system")
    question = "Which version control system do we use?"
    apart = _without("supersession", sentence_cosine=0.70, session_mates=False)
    alone = _ranked(question, policy=apart)
    assert alone.index(echo) < alone.index(new) < alone.index(rule)
    order = _ranked(question, policy=_without("supersession", sentence_cosine=0.70))
    assert order.index(new) < order.index(echo) and order.index(new) < order.index(rule)



def test_a_cue_naming_a_time_keeps_the_older_version_where_it_ranks():
    # "... in <the month of the old rule>?" asks how things stood then: the correction that
    # came later does not replace the answer.
    old, _, new = _dated(
        ("Mentor: Always start function argument names with the prefix 'e_', it is our rule", 60),
        ("Mentor: I enjoyed the talk on naming things at the meetup last week", 30),
        ("Mentor: From now on, function argument names start with the prefix 'x_'", 10),
    )
    month = (timezone.now() - timedelta(days=60)).strftime("%B %Y")
    question = f"Which prefix should function argument names start with in {month}?"

    assert _demoted(question, old, _without("supersession", undated_only=False))
    assert not _demoted(question, old, DEFAULT_POLICY)
    assert _ranked(question).index(old) < _ranked(question).index(new)


def _moved_only_with(flag: str, question: str, pk: int) -> None:
    """Supersession moves memory `pk` for `question` with its `flag` on, and not with it off."""
    assert not _demoted(question, pk, _without("supersession", **{flag: False}))
    assert _demoted(question, pk, _without("supersession", **{flag: True}))


def test_an_instruction_given_later_replaces_the_older_one_without_saying_so():
    # "Please end ..." names no change, yet a standing instruction given later is the latest
    # word on its subject.
    old, new = _dated(
        ("Mentor: Our rule is to end function argument names with the suffix '_x'", 40),
        ("Mentor: Please end function argument names with the suffix '_a' in your code", 20),
    )
    question = "Which suffix should function argument names end with?"
    _moved_only_with("directives", question, old)
    order = _ranked(question, policy=_without("supersession", directives=True))
    assert order.index(new) < order.index(old)


def test_an_instruction_on_a_narrower_subject_replaces_nothing():
    # Without a change word the later instruction must hold the cue's terms as the older one
    # does (directive_terms): one on function names is not a version of the rule on function
    # argument names.
    old, _ = _dated(
        ("Mentor: Our rule is to end function argument names with the suffix '_x'", 40),
        ("Mentor: Please end all function names with the suffix '_c' in new code", 20),
    )
    question = "Which suffix should function argument names end with?"
    assert _demoted(question, old, _without("supersession", directives=True, directive_terms=0.6))
    assert not _demoted(question, old, _without("supersession", directives=True))


def test_two_lines_sharing_only_the_name_asked_about_are_not_versions():
    # Every line of the chat says "Dana", so the name is a small share of the cue's weight: a
    # later line alike that shares only the name (and says "these days") does not replace the
    # rally line, which is what the question is about.
    old, new, *_ = _dated(
        ("Dana: I love going to progressive party rallies with my family on weekends", 40),
        ("Dana: These days I love going to the farmers market with my family on weekends", 20),
        ("Dana: I marched at the rally for voting rights with my friends", 35),
        ("Dana: My new job at the bakery starts on Monday", 30),
        ("Dana: The kids finished their school year with great marks", 25),
        ("Dana: I painted the kitchen a bright shade of yellow", 15),
        ("Dana: We adopted a second cat from the shelter", 10),
        ("Dana: My sister visited us from Lisbon last month", 5),
    )
    question = "What would Dana's political leaning likely be?"
    assert _demoted(question, old, _without("supersession", min_coverage=0.0))
    assert not _demoted(question, old, DEFAULT_POLICY)


def test_a_plural_holds_the_cue_term_its_singular_names():
    # "variables" holds the cue's "variable" once stems are folded: the correction says the
    # same subject in the plural, and the older rule goes below it.
    old, new = _dated(
        ("Mentor: Start variable names with the prefix 'v_' in all of our code", 40),
        ("Mentor: From now on, variables take the prefix 'x_' at their start", 20),
    )
    _moved_only_with("fold_e", "What prefix should variable names start with?", old)


def test_a_question_asking_how_long_lifts_the_line_that_states_a_duration():
    # The bus line holds a number too, but no duration.
    bus, duration = _facts(
        "My daily commute to work is on the number 9 bus",
        "The commute takes 45 minutes each way",
    )
    cue = "How long is my daily commute to work?"
    assert _ranked(cue, policy=_alone("answers", weight=0.0))[0] == bus
    assert _ranked(cue, policy=ALONE)[0] == duration


@pytest.mark.parametrize(
    "cue, shape",
    [
        ("How long is my daily commute to work?", "duration"),
        ("How much did I spend on the new bike?", "amount"),
        ("How far is the gym from my flat?", "distance"),
        ("What time does the standup start?", "clock"),
        ("How many days ago did I attend the networking event?", None),
        ("What do I listen to on my commute?", None),
    ],
)
def test_the_kind_of_answer_a_cue_asks_for_is_read_from_its_words(cue, shape):
    from memory.retrieval import answers

    assert answers.expected(cue) == shape
