"""The API itself: its tokens (``Authorization: Bearer pbp_...``), each rate limited
(``RATES["api-token"]``: 429 with ``Retry-After``), and its errors, one shape for all:
``{"detail": "what went wrong, in words"}``."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer

from games.community import tokens
from games.models import ApiToken
from moderator import ratelimit

DESCRIPTION = """\
Play by post from a program: a player's token reads (and, if it may, plays) one seat or
all the seats of the player's address; a GM's token reads and runs the GM's games.
Send the token as `Authorization: Bearer pbp_...`. Each token may make a bounded number
of calls a minute (429 with `Retry-After` past it). Errors are `{"detail": "..."}`.
See docs/api.md for tokens, limits and a first call with curl."""


class Error(Schema):
    detail: str


class Refused(Exception):
    """An answer other than 200, said in words: ``status`` and ``detail``."""

    def __init__(self, status: int, detail: str, retry_after: int | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.retry_after = retry_after


class TooMany(Exception):
    def __init__(self, seconds: int) -> None:
        super().__init__(seconds)
        self.seconds = seconds


class TokenAuth(HttpBearer):
    """The call's token, unrevoked, counted in its rate limit."""

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        found = tokens.authenticate(token.strip(), now=timezone.now())
        if found is None:
            return None
        key = str(found.pk)
        if ratelimit.over_limits([("api-token", key)])[0]:
            raise TooMany(ratelimit.seconds_left("api-token", key))
        return found


api = NinjaAPI(
    title="Play-by-post moderator API",
    version="1",
    description=DESCRIPTION,
    auth=TokenAuth(),
    urls_namespace="api",
)

# Every operation may answer these besides its own.
ERRORS: dict[int, Any] = {401: Error, 429: Error}


def token_of(request: HttpRequest) -> ApiToken:
    token = request.auth  # type: ignore[attr-defined]  # set by TokenAuth
    assert isinstance(token, ApiToken)
    return token


@api.exception_handler(Refused)
def _refused(request: HttpRequest, error: Refused) -> HttpResponse:
    response = api.create_response(request, {"detail": error.detail}, status=error.status)
    if error.retry_after is not None:
        response["Retry-After"] = str(error.retry_after)
    return response


@api.exception_handler(TooMany)
def _too_many(request: HttpRequest, error: TooMany) -> HttpResponse:
    response = api.create_response(
        request,
        {"detail": f"Too many calls with this token: wait {error.seconds} s."},
        status=429,
    )
    response["Retry-After"] = str(max(error.seconds, 1))
    return response


@api.exception_handler(AuthenticationError)
def _unauthorised(request: HttpRequest, error: AuthenticationError) -> HttpResponse:
    response = api.create_response(
        request,
        {"detail": "No valid token: send 'Authorization: Bearer pbp_...', a token not revoked."},
        status=401,
    )
    response["WWW-Authenticate"] = "Bearer"
    return response


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, error: ValidationError) -> HttpResponse:
    said = []
    for item in error.errors[:5]:
        where = ".".join(
            str(part) for part in item.get("loc", ()) if part not in ("body", "query", "path")
        )
        said.append(
            f"{where}: {item.get('msg', 'invalid')}" if where else str(item.get("msg", "invalid"))
        )
    return api.create_response(
        request, {"detail": "The request is not as documented: " + "; ".join(said)}, status=422
    )


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, error: HttpError) -> HttpResponse:
    return api.create_response(request, {"detail": str(error)}, status=error.status_code)
