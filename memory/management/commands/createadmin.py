"""`slowave createadmin`: a login for the control panel, without prompts when scripted."""

from __future__ import annotations

import getpass
import os
import sys
from typing import Any

from django.core.management.base import CommandError

from memory.management.commands._common import SlowaveCommand
from memory.services.accounts import admin_create


class Command(SlowaveCommand):
    help = (
        "Create an admin login. The password comes from --password-stdin, "
        "SLOWAVE_ADMIN_PASSWORD, or a prompt."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default="admin")
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password from the first line of stdin",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        password = self._password(options["password_stdin"], options["username"])
        name = admin_create(username=options["username"], email=options["email"], password=password)
        if self.as_json:
            self.emit({"ok": True, "data": {"username": name}})
        else:
            self.stdout.write(f"Admin {name} created; log in at /admin/ after `slowave up`.")

    def _password(self, from_stdin: bool, username: str) -> str:
        if from_stdin:
            return sys.stdin.readline().rstrip("\n")
        if os.environ.get("SLOWAVE_ADMIN_PASSWORD"):
            return os.environ["SLOWAVE_ADMIN_PASSWORD"]
        if not sys.stdin.isatty():
            raise CommandError("no password given: use --password-stdin or SLOWAVE_ADMIN_PASSWORD")
        first = getpass.getpass(f"Password for admin login {username!r} (--username to choose): ")
        second = getpass.getpass("Again: ")
        if first != second:
            raise CommandError("the passwords differ")
        return first
