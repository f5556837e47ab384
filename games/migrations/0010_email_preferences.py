"""How often a seat gets its step reports, and a player's default for new seats: the
address's reminder choice becomes its email preference. Seats of games already running
start told of every event so far, so their first report "since" lists nothing old."""

from django.db import migrations, models
from django.db.models import Max, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce


def told_so_far(apps, schema_editor):
    Seat = apps.get_model("games", "Seat")
    Event = apps.get_model("games", "Event")
    latest = (
        Event.objects.filter(game=OuterRef("game"))
        .order_by()
        .values("game")
        .annotate(latest=Max("id"))
        .values("latest")
    )
    Seat.objects.update(reported_through=Coalesce(Subquery(latest), Value(0)))


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0009_game_public_id"),
    ]

    operations = [
        migrations.RenameModel("ReminderChoice", "EmailPreference"),
        migrations.AddField(
            model_name="emailpreference",
            name="reports",
            field=models.CharField(
                blank=True,
                choices=[
                    ("every", "every step"),
                    ("owed", "only when I owe an order, with what happened since"),
                    ("digest", "a daily digest of what happened"),
                ],
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="emailpreference",
            name="digest_day",
            field=models.DateField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="seat",
            name="reports",
            field=models.CharField(
                blank=True,
                choices=[
                    ("every", "every step"),
                    ("owed", "only when I owe an order, with what happened since"),
                    ("digest", "a daily digest of what happened"),
                ],
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="seat",
            name="reported_through",
            field=models.PositiveBigIntegerField(default=0),
        ),
        migrations.RunPython(told_so_far, migrations.RunPython.noop),
    ]
