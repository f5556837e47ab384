"""How a campaign writes its dates: ISO (2026-11-25), which nobody misreads, unless the
host gave the campaign a locale (its ``locale`` option: "de" writes 25.11.2026, "en-GB"
25/11/2026, "en" 11/25/2026)."""

from __future__ import annotations

from datetime import date

from django.utils import formats, translation

from campaigns.models import Campaign


def known_locale(locale: str) -> bool:
    """Whether Django writes dates for ``locale`` (a language code: "de", "en-GB")."""
    return bool(locale) and translation.check_for_language(locale)


def night_date(campaign: Campaign, day: date) -> str:
    locale = campaign.options.get("locale", "")
    if not known_locale(locale):
        return day.isoformat()
    with translation.override(locale):
        return formats.date_format(day, "SHORT_DATE_FORMAT", use_l10n=True)
