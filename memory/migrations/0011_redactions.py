"""SLOWAVE_SECRETS=redact records what it replaced: per field path, the kinds of credential and
their counts (never the values), on the memory remembered and on the session committed or
imported. Existing rows redacted nothing."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0010_memory_passages_complete"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="redactions",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="session",
            name="redactions",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
