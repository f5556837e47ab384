from datetime import time, timedelta
from django.utils import timezone
from games import postal
from games.models import Seat, Step
from games.notify import reminders
from games.notify.ladder import EMAIL, PUSH, Rung
from tests.factories import started_game, GMFactory
from tests.games.postal.test_missed_turns import order_all_but

def test_probe(transactional_db, module_server, module_browser, settings):
    settings.SITE_URL = module_server
    gm = GMFactory.create(username="gm", is_staff=True)
    gm.set_password("pw"); gm.save()
    now = timezone.now() - timedelta(days=3)
    game = started_game(now=now, title="Tuesday Choice", gm=gm, missed=postal.MissedTurns(extensions=1, extension_hours=12, civil_disorder_after=3))
    step = Step.objects.get(game=game)
    order_all_but(game, {1}, now)
    postal.resolve_due_step(step.pk, now=step.deadline)
    postal.resolve_due_step(step.pk, now=step.deadline + timedelta(hours=12))
    bob = Seat.objects.select_related("game").get(game=game, position=1)
    from games.postal import access
    for name, size in (("phone", {"width": 390, "height": 844}), ("desktop", {"width": 1280, "height": 900})):
        context = module_browser.new_context(viewport=size)
        page = context.new_page()
        token = access.mint([bob], now=timezone.now())[1]
        page.goto(f"{module_server}/p/{token}/")
        page.click("button[type=submit]")
        page.wait_for_url(f"{module_server}/play/{game.pk}/1/")
        page.locator("#decided").screenshot(path=f"/tmp/decided-{name}.png")
        context.close()
    context = module_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{module_server}/gm/sign-in/")
    page.fill("input[name=username]", "gm"); page.fill("input[name=password]", "pw")
    page.click("button[type=submit]")
    page.goto(f"{module_server}/gm/{game.pk}/")
    page.locator("#seats").screenshot(path="/tmp/gm-decided.png")
