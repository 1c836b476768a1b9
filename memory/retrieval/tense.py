"""Whether a cue asks how things stand or what happened (signals.superseded reads it).

A knowledge update matters to a cue about the present ("which prefix should argument names
start with?", "what do we use for version control?", "write tests for the export"): the current
version answers it. A cue about the past ("when did she paint the sunrise?", "what did he say
about the trip?", "what was the first book I read?") asks for an event, and an older account of
it is no less true for a newer one saying something alike. The test is English grammar, not a
list of any data set's questions: a past auxiliary or copula, a time-ago word, or a regular
or common irregular past form (not a present passive: "must be included") marks it as past.
"When is the standup?" asks how things stand; "when did we move it?" asks what happened.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
# Past auxiliaries and copulas, time-ago words, and the commonest irregular past forms.
_PAST = frozenset(
    """did didn't was wasn't were weren't had hadn't ago yesterday previously formerly
    went got made said told saw met bought gave took came began felt thought found knew
    wrote ran won lost spent sent brought kept heard paid sold taught caught built fell held
    chose drove flew grew""".split()
)
# Words ending in -ed that are not past forms in a cue.
_NOT_PAST = frozenset("need speed seed feed breed bed red shed indeed embed".split())
# A participle after these is a present passive ("must be included", "is required").
_PASSIVE = frozenset("be is are been being am".split())


def asks_about_past(cue: str) -> bool:
    words = _WORD.findall(cue.lower())
    for before, word in zip(["", *words], words, strict=False):
        if word in _PAST:
            return True
        if word.endswith("ed") and len(word) > 4 and word not in _NOT_PAST:
            if before not in _PASSIVE:
                return True
    return False


# "Which decorators ...", "what modules ...": a question word before a plural noun asks for a
# list, and a list's members are not versions of one another. Not "-ss", "-us", "-is" words.
_MANY = re.compile(r"\b(?:which|what)\s+([a-z]+[^sui\W]s)\b")


def asks_for_many(cue: str) -> bool:
    return _MANY.search(cue.lower()) is not None
