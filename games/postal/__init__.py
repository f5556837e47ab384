"""The only code that changes a game (DESIGN.md section 5).

Views, admin actions, tasks and commands call these functions; each runs in one database
transaction, locks the game row first, and writes everything a change implies (state,
orders, dice, events, the next step, the outbox) before it commits. Time is always passed
in as ``now``.

One module per family of actions, and this package's face names what callers use
(``from games import postal``; ``postal.accept_order(...)``):

- ``games``: a game created, started, its players invited, played again; who may watch it
  and its language; ``recruiting``: a game not yet started changed or deleted.
- ``orders``: an order taken in (``receipts``: the receipts it is owed, written by the
  workers).
- ``resolving``: the due steps claimed and resolved, or one resolved now by the GM;
  ``missed``: what a missed deadline does (autopilots, NMR defaults, extensions,
  absences, civil disorder).
- ``choices``: a player's choices for their seat (emails, extensions, autopilot,
  language).
- ``gm``: the GM's actions on the clock and the current step; ``rollbacks``: the last
  resolution undone; ``seats``: who holds a seat and the links that open it; ``paper``: a
  game continued from its paper record.
- ``press_actions``, ``player_actions``, ``signup_actions``: what messages, a player's
  settings and sign-ups change on seats and games, in their callers' transactions
  (games.community keeps the messages, players and sign-ups themselves).

What they share: ``errors`` (what a refusal raises), ``locks`` (the game's row locked,
its seat and open step read under it), ``gm_log`` (the GM's log and the check that the GM
acted on the step open now) and ``steps`` (a step opened, closed and recorded, its
reports queued). ``access`` mints the links and says which seats a browser opens;
``game_templates`` keeps a GM's saved game settings.
"""

from __future__ import annotations

from games.postal.choices import (
    choose_autopilot,
    choose_ladder,
    choose_language,
    choose_reports,
    stop_email,
    use_extension,
)
from games.postal.errors import (
    NotAdmitted,
    OrderRejected,
    PostalError,
    RecordRefused,
    SeatNotFound,
    StepMovedOn,
    StepMovedOnForGM,
)
from games.postal.games import (
    MOST_EXTENSIONS,
    MissedTurns,
    Player,
    check_options,
    create_game,
    invite,
    play_again,
    set_language,
    set_public,
    start_game,
)
from games.postal.gm import (
    allow_bots,
    clear_needs_gm,
    extend_deadline,
    pause,
    resend_report,
    resume,
    set_order,
)
from games.postal.gm_log import check_shown_step, log_gm_action
from games.postal.orders import (
    GAME_COLUMNS,
    SEAT_COLUMNS,
    STEP_COLUMNS,
    accept_linked_order,
    accept_order,
)
from games.postal.paper import import_game
from games.postal.receipts import write_receipts
from games.postal.recruiting import GameGone, change_recruiting, delete_recruiting
from games.postal.resolving import (
    count_due_steps,
    due_step_ids,
    due_steps,
    resolve_due_step,
    resolve_due_steps,
    resolve_now,
)
from games.postal.rollbacks import rollback, rollback_offered
from games.postal.seats import (
    SEND_LOST_LINKS,
    ask_lost_links,
    mark_bot,
    mark_email_failing,
    replace_player,
    rotate_link,
    send_lost_links,
)
from games.postal.steps import mark_told

__all__ = [
    "GAME_COLUMNS",
    "MOST_EXTENSIONS",
    "SEAT_COLUMNS",
    "SEND_LOST_LINKS",
    "STEP_COLUMNS",
    "GameGone",
    "MissedTurns",
    "NotAdmitted",
    "OrderRejected",
    "Player",
    "PostalError",
    "RecordRefused",
    "SeatNotFound",
    "StepMovedOn",
    "StepMovedOnForGM",
    "accept_linked_order",
    "accept_order",
    "allow_bots",
    "ask_lost_links",
    "change_recruiting",
    "check_options",
    "check_shown_step",
    "choose_autopilot",
    "choose_ladder",
    "choose_language",
    "choose_reports",
    "clear_needs_gm",
    "count_due_steps",
    "create_game",
    "delete_recruiting",
    "due_step_ids",
    "due_steps",
    "extend_deadline",
    "import_game",
    "invite",
    "log_gm_action",
    "mark_bot",
    "mark_email_failing",
    "mark_told",
    "pause",
    "play_again",
    "replace_player",
    "resend_report",
    "resolve_due_step",
    "resolve_due_steps",
    "resolve_now",
    "resume",
    "rollback",
    "rollback_offered",
    "rotate_link",
    "send_lost_links",
    "set_language",
    "set_order",
    "set_public",
    "start_game",
    "stop_email",
    "use_extension",
    "write_receipts",
]
