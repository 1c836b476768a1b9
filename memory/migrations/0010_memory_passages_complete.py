"""A remember call embeds only a memory's leading passages (memory.passages.REMEMBER_PASSAGES);
`passages_complete` marks the memories whose remaining passages the embeddings backfill pass still
has to embed. Existing rows are complete (or NULL, which that pass already fills)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0009_vec_generation"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="passages_complete",
            field=models.BooleanField(default=True),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("passages_complete", False)),
                fields=["scope"],
                name="memory_passages_pending",
            ),
        ),
    ]
