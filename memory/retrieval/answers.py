"""The kind of answer a question asks for, and whether a text holds one.

"How long is my commute?" is answered by a duration ("45 minutes each way"), "how much did it
cost" by an amount, "how far" by a distance, "what time" by a clock time. Of items that match
the cue alike, the one holding an answer of that kind is the likelier evidence (signals.answer).
Read off the words only: no model, and nothing for a cue that is not such a question. A question
about a date ("how many days ago", "how long before") asks for a moment, not a quantity the
text states, and expects nothing here.
"""

from __future__ import annotations

import re

_NUMBER = (
    r"(?:\d+(?:[.,]\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|fifteen|twenty|thirty|forty|fifty|sixty|ninety|a few|several|a couple of|half an?)"
)
_TIME_UNITS = r"(?:seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|decades?)"
_DURATION = re.compile(rf"\b{_NUMBER}[\s-]+{_TIME_UNITS}\b", re.IGNORECASE)
_AMOUNT = re.compile(
    r"[$€£]\s?\d|\b\d+(?:[.,]\d+)?\s*(?:dollars?|euros?|pounds?|bucks|usd|k)\b", re.IGNORECASE
)
_DISTANCE = re.compile(
    rf"\b{_NUMBER}[\s-]*(?:miles?|mi|kilometers?|kilometres?|km|meters?|metres?|feet|ft)\b",
    re.IGNORECASE,
)
_CLOCK = re.compile(r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b", re.I)

SHAPES = {"duration": _DURATION, "amount": _AMOUNT, "distance": _DISTANCE, "clock": _CLOCK}

_ASKS_MOMENT = re.compile(r"\b(?:ago|before|after|between|since when|when)\b")
_ASKS = (
    ("duration", re.compile(rf"\bhow\s+(?:long|many\s+{_TIME_UNITS}|much\s+time)\b"
                            r"|\btotal\s+time\b")),
    ("amount", re.compile(r"\bhow\s+much\b.*\b(?:cost|costs|spend|spent|pay|paid|price|save"
                          r"|saved|budget|money|earn|earned|raise|raised)\b|\bwhat\s+(?:is|was"
                          r")\s+the\s+(?:price|cost)\b")),
    ("distance", re.compile(r"\bhow\s+far\b")),
    ("clock", re.compile(r"\bwhat\s+time\b")),
)


def expected(cue: str) -> str | None:
    """The kind of answer the cue asks for (a key of SHAPES), or None."""
    text = cue.lower()
    if _ASKS_MOMENT.search(text):
        return None
    for shape, asks in _ASKS:
        if asks.search(text):
            return shape
    return None


def holds(shape: str, text: str) -> bool:
    """Whether the text states an answer of that kind."""
    return SHAPES[shape].search(text) is not None
