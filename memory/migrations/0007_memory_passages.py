"""Passage vectors (memory.passages): a column for them, their sqlite-vec table and the numpy
backend's write stamp. Existing memories get passages from the next embeddings backfill pass."""

from django.db import migrations, models


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS vec_passage USING vec0("
            "scope text partition key, embedding float[384] distance_metric=cosine)"
        )
    apps.get_model("memory", "VectorStamp").objects.get_or_create(kind="passage")


class Migration(migrations.Migration):
    dependencies = [("memory", "0006_postgres_lexical_tables")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="passages",
            field=models.BinaryField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(create, migrations.RunPython.noop),
    ]
