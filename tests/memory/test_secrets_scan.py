"""The credential scanner (memory.secrets): each kind found with its exact span, ordinary text
with numbers, hashes and ids left alone, redaction that a second scan finds clean."""

from __future__ import annotations

import pytest

from memory.errors import InvalidInput
from memory.schemas import CommitIn
from memory.secrets import SecretGuard, secrets_redact, secrets_scan

AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)


def _found(text: str) -> list[tuple[str, str]]:
    return [(f.kind, text[f.start : f.end]) for f in secrets_scan(text)]


@pytest.mark.parametrize(
    ("text", "kind", "secret"),
    [
        (f"the deploy user is {AWS_ID} for staging", "AWS access key", AWS_ID),
        (f'aws_secret_access_key = "{AWS_SECRET}"', "AWS access key", AWS_SECRET),
        (f"push with {GITHUB} then tag", "GitHub token", GITHUB),
        (f"Authorization: Bearer {JWT} (expires hourly)", "JSON Web Token", JWT),
        ("db is postgres://app:Tr0ub4dor@db.internal:5432/app", "password in URL", "Tr0ub4dor"),
        ("API_KEY=f83kd92jd83kf0s\nDEBUG=true", "secret assignment", "f83kd92jd83kf0s"),
        ('client_secret = "s3cr3t-v4lue-xyz"', "secret assignment", "s3cr3t-v4lue-xyz"),
        ("GitLab: glpat-x7Yq2Lm9Np4Rs6Tu8Vw0 works", "GitLab token", "glpat-x7Yq2Lm9Np4Rs6Tu8Vw0"),
    ],
)
def test_it_finds_each_kind_with_its_exact_span(text: str, kind: str, secret: str) -> None:
    assert _found(text) == [(kind, secret)]


def test_it_spans_a_private_key_block_from_begin_to_end() -> None:
    text = f"key for the bastion:\n{PEM}\nrotate yearly"
    assert _found(text) == [("private key", PEM)]
    assert secrets_redact(text, secrets_scan(text)) == (
        "key for the bastion:\n[REDACTED:private key]\nrotate yearly"
    )


def test_a_key_block_without_its_end_runs_to_the_end_of_the_text() -> None:
    text = "pasted: " + PEM.rsplit("\n", 1)[0]
    assert _found(text) == [("private key", PEM.rsplit("\n", 1)[0])]


@pytest.mark.parametrize(
    "text",
    [
        "Fixed in commit 3f2a9c1e5b7d4a6f8e0c2b4d6f8a0c2e4b6d8f0a; 42 of 57 tests pass.",
        "Request 123e4567-e89b-12d3-a456-426614174000 timed out after 30000 ms on port 8443.",
        "The sha256 is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.",
        "The password policy needs 12 characters; rotate the secret every 90 days.",
        "Password: ask the on-call engineer, never paste it here.",
        "password = None  # set by the loader",
        "DB_PASSWORD=${DB_PASSWORD}",
        "hashed_password = Column(String, nullable=False)",
        "Visit https://docs.example.com:8443/guide?id=7 for the setup steps.",
        "Caroline went to the LGBTQ support group on 7 May 2023 with Mel.",
    ],
)
def test_it_finds_nothing_in_ordinary_text(text: str) -> None:
    assert secrets_scan(text) == []


def test_redacted_text_scans_clean() -> None:
    text = f"id {AWS_ID}, token {GITHUB}, API_KEY=abc123def456 and {JWT}"
    redacted = secrets_redact(text, secrets_scan(text))
    assert redacted == (
        "id [REDACTED:AWS access key], token [REDACTED:GitHub token], "
        "API_KEY=[REDACTED:secret assignment] and [REDACTED:JSON Web Token]"
    )
    assert secrets_scan(redacted) == []


def test_reject_names_the_field_and_kind_but_never_the_secret() -> None:
    with pytest.raises(InvalidInput) as caught:
        SecretGuard("reject").clean(f"use {AWS_ID} for uploads", "memories[2].content")
    error = caught.value.as_error()
    assert error["field_errors"][0]["path"] == "memories[2].content"
    assert "AWS access key at characters 5–24" in error["message"]
    assert AWS_ID not in str(error)


def test_redact_walks_models_and_json_members_by_name() -> None:
    data = CommitIn.model_validate(
        {
            "session_id": "sess_1",
            "final_goal": "ship it",
            "outcome": "success",
            "outcome_summary": f"deployed with {GITHUB}",
            "verification": {"status": "verified", "summary": "ok"},
            "procedure": {
                "summary": "deploy",
                "steps": [{"summary": "export API_KEY=f83kd92jd83kf0s"}],
                "context": {"password": "hunter2-staging", "region": "eu-west-1"},
            },
        }
    )
    guard = SecretGuard("redact")
    clean = guard.clean_value(data, "")
    assert clean.outcome_summary == "deployed with [REDACTED:GitHub token]"
    assert clean.procedure.steps[0].summary == "export API_KEY=[REDACTED:secret assignment]"
    assert clean.procedure.context == {
        "password": "[REDACTED:secret assignment]",
        "region": "eu-west-1",
    }
    assert guard.redacted == {
        "outcome_summary": {"GitHub token": 1},
        "procedure.steps[0].summary": {"secret assignment": 1},
        "procedure.context.password": {"secret assignment": 1},
    }


@pytest.mark.parametrize(
    "text",
    [
        'db = connect(host="localhost", user="root", password="password")',
        "DATABASE_URL=postgresql://user:password@localhost/app",
        'API_KEY="your-api-key-here"',
        "SECRET_KEY=changeme",
        'client_secret = "xxxxxxxxxxxx"',
    ],
)
def test_it_leaves_stand_ins_for_a_secret_alone(text: str) -> None:
    assert secrets_scan(text) == []


def test_a_real_value_beside_a_stand_in_is_still_found() -> None:
    assert _found("postgres://admin:hunter2-prod@db/app and password=password") == [
        ("password in URL", "hunter2-prod")
    ]


def test_a_variable_named_for_a_secret_is_no_value_but_a_word_holding_one_is() -> None:
    assert secrets_scan("svc = Blob(account_key=storage_account_key, name=n)") == []
    assert secrets_scan("key = settings.SECRET_KEY") == []
    assert _found("PASSWORD=mypassword123") == [("secret assignment", "mypassword123")]
