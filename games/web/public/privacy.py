"""``/privacy/``: what the service keeps about a person, why, for how long and who sees it
(GDPR articles 13 and 15), from the retention settings as they are; the operator's contact
and own text from settings (PRIVACY_CONTACT, PRIVACY_TEXT). Public: every page's footer and
every email's link to it."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

DAY = 86400


def _is_address(contact: str) -> bool:
    try:
        validate_email(contact)
    except ValidationError:
        return False
    return True


@require_GET
def privacy(request: HttpRequest) -> HttpResponse:
    contact = settings.PRIVACY_CONTACT.strip()
    return render(
        request,
        "games/privacy.html",
        {
            "mail_days": settings.MAIL_RETENTION_DAYS,
            "link_days": settings.LINK_DAYS,
            "signin_minutes": settings.SIGNIN_MINUTES,
            "signup_hours": settings.SIGNUP_CONFIRM_HOURS,
            "push_days": settings.PUSH_FAILING_DAYS,
            "session_days": max(1, settings.SESSION_COOKIE_AGE // DAY),
            "contact": contact,
            "contact_is_address": _is_address(contact),
            "operator_text": settings.PRIVACY_TEXT.strip(),
        },
    )
