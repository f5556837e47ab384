"""A random public id for every game, for the addresses anyone may open (the dice check):
added empty, filled for the games there are, then made unique."""

import secrets

from django.db import migrations, models

import games.models


def fill(apps, schema_editor):
    Game = apps.get_model("games", "Game")
    for game in Game.objects.filter(public_id="").only("pk"):
        game.public_id = secrets.token_urlsafe(12)
        game.save(update_fields=["public_id"])


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0008_order_receipt_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="game",
            name="public_id",
            field=models.CharField(default="", editable=False, max_length=16),
            preserve_default=False,
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="game",
            name="public_id",
            field=models.CharField(
                default=games.models.new_public_id, editable=False, max_length=16, unique=True
            ),
        ),
    ]
