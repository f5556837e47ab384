"""The host's campaign pages, in the GM panel: a host sees and runs their own campaigns
only (any other answers 404). Thin: each action validates a form and calls one
``campaigns.postal`` function, then redirects back with its message."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from campaigns import dates, postal
from campaigns.models import Campaign, Night
from campaigns.web import chart
from campaigns.web.forms import FIRST_PLAYER_KEY, CampaignForm, MemberForm, NightForm
from games.engines import registry
from games.lib import schedule
from games.models import Webhook
from games.notify import webhooks
from games.web.common import first_error
from games.web.gm.forms import WebhookFields
from games.web.gm.signin import gm_required


def campaigns_of(request: HttpRequest) -> QuerySet[Campaign]:
    campaigns = Campaign.objects.all()
    if not request.user.is_superuser:
        campaigns = campaigns.filter(host_id=request.user.pk)
    return campaigns


def _campaign(request: HttpRequest, campaign_id: int) -> Campaign:
    return get_object_or_404(campaigns_of(request), pk=campaign_id)


@gm_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    """The host's campaigns, and the kinds of campaign to start: a First Player campaign or
    a league of any other game and profile."""
    campaigns = campaigns_of(request).filter(host_id=request.user.pk)
    leagues = [
        (profile, _league_url(key, profile.key))
        for key, profile in registry.profiles()
        if key != FIRST_PLAYER_KEY
    ]
    return render(request, "campaigns/list.html", {"campaigns": campaigns, "leagues": leagues})


def rules_of(campaign: Campaign) -> tuple[str, list[tuple[str, str]]]:
    """The campaign's game and options in words: what its page shows instead of JSON."""
    options = campaign.options
    rhythm = [
        ("Deadlines", schedule.describe(options.get("schedule", postal.DEFAULT_NIGHT_SCHEDULE))),
        ("Time zone", options.get("time_zone", "UTC")),
    ]
    if campaign.kind == Campaign.Kind.FIRST_PLAYER:
        mine = {key: options[key] for key in postal.FIRST_PLAYER_KEYS if key in options}
        title, words = registry.describe(FIRST_PLAYER_KEY, mine)
        labels = {o.label for o in registry.settings(FIRST_PLAYER_KEY).options if o.key in mine}
        return title, [(label, w) for label, w in words if label in labels] + rhythm
    title, words = registry.describe(options["engine"], options.get("game_options", {}))
    points = ", ".join(str(p) for p in options.get("points", postal.DEFAULT_POINTS))
    return title, [*words, ("Points per place", points), *rhythm]


def _league_url(game: str, profile: str) -> str:
    if profile:
        return reverse("campaigns:new_league_profile", args=[game, profile])
    return reverse("campaigns:new_league", args=[game])


@gm_required
def new_campaign(request: HttpRequest, game: str | None = None, profile: str = "") -> HttpResponse:
    """The form of a new First Player campaign (``game`` None) or league of ``game``."""
    title = "A First Player campaign"
    if game is not None:
        try:
            chosen = registry.settings(game).profile(profile)
        except KeyError:
            raise Http404("no such game") from None
        if game == FIRST_PLAYER_KEY:
            raise Http404("The First Player is a campaign of its own")
        title = f"A league of {chosen.title}"
        profile = chosen.key
    form = CampaignForm(request.POST or None, game=game, profile=profile)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            campaign = postal.create_campaign(
                host=request.user,
                kind=form.kind,
                name=data["name"],
                members=data["members"],
                options=data["options"],
                now=timezone.now(),
            )
        except postal.CampaignError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"{campaign.name} is created.")
            return redirect("campaigns:campaign", campaign.pk)
    return render(request, "campaigns/new.html", {"form": form, "title": title})


@gm_required
def campaign_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    members = list(campaign.members.order_by("joined_at", "id"))
    context = {
        "campaign": campaign,
        "members": members,
        "member_form": MemberForm(),
        "rules": rules_of(campaign),
        **_webhook_context(campaign),
    }
    if campaign.kind == Campaign.Kind.FIRST_PLAYER:
        sheet = postal.tracker(campaign)
        nights = campaign.nights.order_by("-number").prefetch_related(
            "tables__game", "attendance__member"
        )
        context |= {
            "night_form": NightForm(members=members, initial={"date": timezone.localdate()}),
            "open_night": campaign.nights.filter(status=Night.Status.OPEN)
            .prefetch_related("tables__game", "attendance__member")
            .first(),
            "history": [
                (night, [a.member.name for a in night.attendance.all() if not a.present])
                for night in nights
            ],
            "tracker": sheet,
            "chart": _chart(campaign, sheet),
        }
    else:
        games, rows = postal.league_standings(campaign)
        context |= {"games": games, "rows": rows}
    return render(request, "campaigns/campaign.html", context)


def _webhook_context(campaign: Campaign) -> dict[str, object]:
    """The campaign's webhook form (its address never shown in full) and its latest
    deliveries, of all its games."""
    hook = Webhook.objects.filter(campaign=campaign).first()
    initial = {"format": hook.format, "active": hook.active} if hook else {}
    return {
        "webhook": hook,
        "webhook_shown": webhooks.shown(hook.url) if hook else "",
        "webhook_form": WebhookFields(
            has_hook=hook is not None, initial=initial, auto_id="webhook_%s"
        ),
        "webhook_deliveries": webhooks.latest_of_campaign(campaign.pk),
    }


@gm_required
@require_POST
def campaign_webhook(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Set, change or (with ``remove``) take away the campaign's webhook."""
    campaign = _campaign(request, campaign_id)
    if "remove" in request.POST:
        if webhooks.remove(campaign_id=campaign.pk):
            messages.success(request, "The webhook is removed, with its deliveries.")
        else:
            messages.error(request, "The campaign has no webhook to remove.")
        return redirect("campaigns:campaign", campaign.pk)
    has_hook = Webhook.objects.filter(campaign=campaign).exists()
    form = WebhookFields(request.POST, has_hook=has_hook)
    if not form.is_valid():
        messages.error(request, f"{first_error(form)} Nothing was changed.")
        return redirect("campaigns:campaign", campaign.pk)
    data = form.cleaned_data
    try:
        hook = webhooks.set_for_campaign(
            campaign.pk, url=data["url"], format=data["format"], active=data["active"]
        )
    except webhooks.BadURL as error:
        messages.error(request, f"{error.message} Nothing was changed.")
    else:
        state = "on" if hook.active else "switched off"
        messages.success(
            request,
            f"The webhook is set to {webhooks.shown(hook.url)} ({hook.get_format_display()}); "
            f"{state}. It hears of every game of the campaign.",
        )
    return redirect("campaigns:campaign", campaign.pk)


@gm_required
@require_POST
def add_member(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    form = MemberForm(request.POST)
    if not form.is_valid():
        messages.error(request, first_error(form))
        return redirect("campaigns:campaign", campaign.pk)
    try:
        member = postal.add_member(campaign.pk, form.cleaned_data["member"], now=timezone.now())
    except postal.CampaignError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"{member.name} joins the campaign.")
    return redirect("campaigns:campaign", campaign.pk)


@gm_required
@require_POST
def open_night(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    members = list(campaign.members.order_by("joined_at", "id"))
    form = NightForm(request.POST, members=members)
    if not form.is_valid():
        messages.error(request, first_error(form))
        return redirect("campaigns:campaign", campaign.pk)
    try:
        night = postal.open_night(
            campaign.pk,
            day=form.cleaned_data["date"],
            tables=form.tables(),
            rounds=form.cleaned_data["rounds"],
            now=timezone.now(),
        )
    except postal.CampaignError as error:
        messages.error(request, error.message)
    else:
        messages.success(
            request,
            f"Night {night.number} is open: {night.tables.count()} table(s); "
            "every player has their link by email.",
        )
    return redirect("campaigns:campaign", campaign.pk)


@gm_required
@require_POST
def league_game(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    try:
        entry = postal.start_league_game(campaign.pk, now=timezone.now())
    except postal.CampaignError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"{entry.game.title} has started.")
    return redirect("campaigns:campaign", campaign.pk)


@gm_required
def tracker_csv(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    response = HttpResponse(postal.tracker_csv(campaign), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="tracker-{campaign.pk}.csv"'
    return response


@gm_required
def tracker_svg(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    svg = _chart(campaign, postal.tracker(campaign))
    return HttpResponse(svg, content_type="image/svg+xml")


def _chart(campaign: Campaign, sheet: postal.Tracker) -> str:
    return chart.tracker_svg(sheet, [dates.night_date(campaign, n.date) for n in sheet.nights])
