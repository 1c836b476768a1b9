"""`slowave token create|revoke|list`: API tokens for `/api/` and `/mcp` (spec §10, §12).

The plaintext token is printed once at creation; only its sha256 hash is stored.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError
from django.utils import timezone

from memory.management.commands._common import SlowaveCommand
from memory.services.tokens import token_create, token_list, token_revoke


class Command(SlowaveCommand):
    help = "Create, revoke or list API tokens (Authorization: Bearer <token>)."

    def add_arguments(self, parser: Any) -> None:
        # One flat parser rather than subparsers: the global `--json` is appended after the
        # action by `slowave`, and argparse subparsers would reject it there.
        parser.add_argument("action", choices=("create", "revoke", "list"))
        parser.add_argument("id", nargs="?", type=int, help="revoke: token id (see `token list`)")
        parser.add_argument("--user", help="create: owner's username; revoke: only their tokens")
        parser.add_argument(
            "--name",
            help="create: a label (e.g. the agent's machine); "
            "revoke: every active token with this label",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "create":
            if not options["user"] or not options["name"]:
                raise CommandError("token create needs --user NAME and --name LABEL")
            row, token = token_create(
                username=options["user"], name=options["name"], now=timezone.now()
            )
            if self.as_json:
                self.emit({"ok": True, "data": {"id": row.pk, "name": row.name, "token": token}})
            else:
                self.stdout.write(token)
                self.stderr.write(
                    f"token {row.pk} ({row.name}) for {options['user']}; shown once, store it now"
                )
        elif action == "revoke":
            rows = token_revoke(
                token_id=options["id"],
                name=options["name"],
                username=options["user"],
                now=timezone.now(),
            )
            if self.as_json:
                self.emit({"ok": True, "data": {"revoked": [r.pk for r in rows]}})
            else:
                self.stdout.write("revoked: " + ", ".join(str(r.pk) for r in rows))
        else:
            tokens = token_list()
            if self.as_json:
                self.emit({"ok": True, "data": {"tokens": tokens}})
            else:
                for token_row in tokens:
                    state = "revoked" if token_row["revoked_at"] else "active"
                    self.stdout.write(
                        f"{token_row['id']}\t{token_row['user']}\t{token_row['name']}\t{state}\t"
                        f"last used {token_row['last_used_at'] or 'never'}"
                    )
