"""People who may open the control panel (spec §10: `slowave createadmin`)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from memory.errors import InvalidInput

# The control panel can suppress any memory; a floor holds even where no validators are set.
MIN_PASSWORD = 10


def admin_create(*, username: str, email: str, password: str) -> str:
    """Create a superuser; refuses an existing name or a weak password. Returns the username."""
    User = get_user_model()
    name = (username or "").strip()
    if not name:
        raise InvalidInput.for_field("username", "a username is required")
    if User.objects.filter(username=name).exists():
        raise InvalidInput.for_field_message(
            "username",
            f"user {name} already exists; pick another name or change the password in the admin",
        )
    if len(password or "") < MIN_PASSWORD:
        raise InvalidInput.for_field(
            "password", f"password must be at least {MIN_PASSWORD} characters"
        )
    try:
        validate_password(password, User(username=name, email=email))
    except ValidationError as exc:
        raise InvalidInput.for_field("password", " ".join(exc.messages)) from None
    User.objects.create_superuser(username=name, email=email, password=password)
    return name
