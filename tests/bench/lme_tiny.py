"""A tiny LongMemEval-layout file, written per test (the real data is never used in tests).

Four questions: one with user evidence in one session (its haystack listed out of date order and
holding a turn longer than a memory may be), one with evidence in two sessions, an abstention
question, and one whose evidence is only an assistant turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LONG_TURN = "I am writing a novel about sailing around the cold northern islands. " * 130


def _turn(role: str, content: str, has_answer: bool = False) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": role, "content": content}
    if has_answer:
        turn["has_answer"] = True
    return turn


PUPPY = {
    "question_id": "q-puppy",
    "question_type": "single-session-user",
    "question": "What breed is my new puppy?",
    "answer": "a corgi",
    "question_date": "2023/06/01 (Thu) 10:00",
    "haystack_session_ids": ["s-pasta", "s-puppy", "s-novel"],
    "haystack_dates": [
        "2023/05/22 (Mon) 09:00",
        "2023/05/20 (Sat) 02:21",
        "2023/05/21 (Sun) 14:30",
    ],
    "haystack_sessions": [
        [
            _turn("user", "Can you suggest some pasta recipes for a quick dinner tonight?"),
            _turn("assistant", "Sure, a carbonara or a simple tomato and basil spaghetti."),
        ],
        [
            _turn("user", "I just brought home my new puppy, a corgi named Biscuit!", True),
            _turn("assistant", "Congratulations! Corgis are playful and loyal dogs."),
            _turn("user", "Which dog food brands are good for him?"),
        ],
        [_turn("user", LONG_TURN), _turn("assistant", "That sounds like a lovely story.")],
    ],
    "answer_session_ids": ["s-puppy"],
}

MARATHONS = {
    "question_id": "q-marathons",
    "question_type": "multi-session",
    "question": "How many marathons have I run this year?",
    "answer": 2,
    "question_date": "2023/05/01 (Mon) 08:00",
    "haystack_session_ids": ["m-boston", "m-chicago", "m-garden"],
    "haystack_dates": [
        "2023/03/01 (Wed) 18:00",
        "2023/04/10 (Mon) 19:30",
        "2023/04/12 (Wed) 07:15",
    ],
    "haystack_sessions": [
        [_turn("user", "I ran my first marathon of the year in Boston last weekend.", True)],
        [
            _turn("user", "Finished the Chicago marathon today, my second one this year!", True),
            _turn("assistant", "Well done on your second marathon."),
        ],
        [_turn("user", "Help me plan a vegetable garden for the spring season.")],
    ],
    "answer_session_ids": ["m-boston", "m-chicago"],
}

ABSTENTION = {
    "question_id": "q-cat_abs",
    "question_type": "single-session-user",
    "question": "What is my cat's name?",
    "answer": "You did not mention a cat.",
    "question_date": "2023/06/01 (Thu) 10:00",
    "haystack_session_ids": ["x-dog"],
    "haystack_dates": ["2023/05/20 (Sat) 02:21"],
    "haystack_sessions": [[_turn("user", "My dog is called Rex.", True)]],
    "answer_session_ids": ["x-dog"],
}

HOTEL = {
    "question_id": "q-hotel",
    "question_type": "single-session-assistant",
    "question": "Which hotel did you recommend for my stay in Lisbon?",
    "answer": "Hotel Avenida Palace",
    "question_date": "2023/07/01 (Sat) 12:00",
    "haystack_session_ids": ["a-lisbon", "a-bikes"],
    "haystack_dates": ["2023/06/10 (Sat) 11:00", "2023/06/12 (Mon) 16:45"],
    "haystack_sessions": [
        [
            _turn("user", "I am going to Lisbon in July, where should I stay?"),
            _turn("assistant", "I recommend the Hotel Avenida Palace near Rossio square.", True),
        ],
        [_turn("user", "What should I look for in a second-hand road bike?")],
    ],
    "answer_session_ids": ["a-lisbon"],
}


def lme_payload() -> list[dict[str, Any]]:
    return [PUPPY, MARATHONS, ABSTENTION, HOTEL]


def write_lme(directory: Path, payload: list[dict[str, Any]] | None = None) -> Path:
    path = directory / "longmemeval-tiny.json"
    path.write_text(json.dumps(lme_payload() if payload is None else payload), encoding="utf-8")
    return path
