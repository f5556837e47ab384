from django.db import migrations

from moderator.db.compression import lz4_columns


class Migration(migrations.Migration):
    dependencies = [("games", "0005_step_status_without_resolving")]

    operations = [
        lz4_columns(
            "games",
            {"game": ["state"], "step": ["prompts", "state_before", "state_after"]},
        )
    ]
