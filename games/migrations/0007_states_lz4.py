from django.db import migrations

from moderator.db.compression import lz4_columns


class Migration(migrations.Migration):
    dependencies = [("games", "0006_order_receipt_due")]

    operations = [
        lz4_columns(
            "games",
            {"game": ["state"], "step": ["prompts", "state_before", "state_after"]},
        )
    ]
