"""``{{ night.date|night_date:campaign }}``: a date as the campaign writes it
(campaigns.dates)."""

from __future__ import annotations

from datetime import date

from django import template

from campaigns import dates
from campaigns.models import Campaign

register = template.Library()


@register.filter
def night_date(day: date, campaign: Campaign) -> str:
    return dates.night_date(campaign, day)
