"""The backup and restore drill of docs/operations.md ("Backups"), run as written: pg_dump
of the database in its custom format, pg_restore into a new, empty database, and the
service on it: a worker and beat resolve the step that fell due meanwhile, and the game
goes on from where the backup left it, its dice still checking out."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from games import postal
from games.models import Game
from tests.factories import choice_game
from tests.integration.conftest import ROOT, Services, wait_for
from tests.services import missing

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]

DOCS = (ROOT / "docs" / "operations.md").read_text()
RESTORED = "moderator_backup_drill"


def client_options() -> list[str]:
    db = connection.settings_dict
    return ["-h", str(db["HOST"]), "-p", str(db["PORT"]), "-U", str(db["USER"])]


def psql(database: str, sql: str) -> str:
    command = ["psql", *client_options(), "-d", database, "-tAc", sql]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def restored() -> Iterator[str]:
    if shutil.which("pg_dump") is None or shutil.which("pg_restore") is None:
        missing("PostgreSQL's client programs (pg_dump, pg_restore)")
    drop = ["dropdb", *client_options(), "--if-exists", "--force", RESTORED]
    subprocess.run(drop, check=True)
    subprocess.run(["createdb", *client_options(), RESTORED], check=True)
    yield RESTORED
    subprocess.run(drop, check=True)


def test_a_backup_restored_into_a_new_database_runs_and_the_game_goes_on(
    services: Services, restored: str, tmp_path: Path
) -> None:
    # The commands operations.md gives, run below with the test database's names.
    documented = " ".join(DOCS.replace("\\\n", " ").split())
    assert "pg_dump -U moderator -Fc moderator >" in documented
    assert (
        "pg_restore -U moderator -d moderator --clean --if-exists moderator-DATE.dump" in documented
    )
    # A game whose step 1 is due: the backup is taken before any worker resolves it.
    began = timezone.now() - timedelta(days=3)
    game = postal.start_game(choice_game(3).pk, now=began)
    dump = tmp_path / "moderator.dump"
    test_database = str(connection.settings_dict["NAME"])
    with dump.open("wb") as out:
        subprocess.run(["pg_dump", *client_options(), "-Fc", test_database], stdout=out, check=True)
    subprocess.run(
        ["pg_restore", *client_options(), "-d", restored, "--clean", "--if-exists", str(dump)],
        check=True,
        capture_output=True,
    )
    assert psql(restored, f"SELECT step_number FROM games_game WHERE id = {game.pk}") == "1"
    # The service on the restored database: the sweep picks up what fell due meanwhile.
    db = connection.settings_dict
    services.env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{restored}"
    services.worker()
    services.beat()

    def moved_on() -> bool:
        sql = f"SELECT step_number FROM games_game WHERE id = {game.pk}"
        return psql(restored, sql) == "2"

    wait_for(moved_on, 60, "the restored game's step 1 to be resolved", services)
    # The original database was not touched: only the restored one moved on.
    assert Game.objects.get(pk=game.pk).step_number == 1
    sql = f"SELECT count(*) FROM games_diceroll WHERE game_id = {game.pk}"
    assert int(psql(restored, sql)) > int(psql(test_database, sql))
