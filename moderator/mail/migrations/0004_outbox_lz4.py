from django.db import migrations

from moderator.db.compression import lz4_columns


class Migration(migrations.Migration):
    dependencies = [("mail", "0003_inbound_tracking")]

    operations = [lz4_columns("mail", {"outboundemail": ["text", "html", "headers"]})]
