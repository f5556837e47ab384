"""The postal record of a game. Thin models: the only code that changes a game is
``games.postal``; the rules live in ``games.engines``.

The rows live in a module each by what they are: ``games`` (a game and its settings),
``seats``, ``steps`` (the play: steps, orders, dice, events, the GM's log), ``press``,
``people`` (addresses across their games), ``webhooks``, ``push`` and ``api``
(tokens). Import them from here,
as the migrations do (``games.models.new_public_id``)."""

from __future__ import annotations

from games.models.api import ApiToken as ApiToken
from games.models.api import TokenAction as TokenAction
from games.models.conditionals import ConditionalOrder as ConditionalOrder
from games.models.games import ENGLISH as ENGLISH
from games.models.games import LANGUAGES as LANGUAGES
from games.models.games import TEMPLATE_NAME_LENGTH as TEMPLATE_NAME_LENGTH
from games.models.games import AbsencePolicy as AbsencePolicy
from games.models.games import Game as Game
from games.models.games import GameTemplate as GameTemplate
from games.models.games import Publicity as Publicity
from games.models.games import SignUpMode as SignUpMode
from games.models.games import default_reminders as default_reminders
from games.models.games import new_public_id as new_public_id
from games.models.ledger import Decision as Decision
from games.models.people import Absence as Absence
from games.models.people import EmailPreference as EmailPreference
from games.models.people import Player as Player
from games.models.people import Rating as Rating
from games.models.people import SignIn as SignIn
from games.models.people import SignUp as SignUp
from games.models.press import MESSAGE_LENGTH as MESSAGE_LENGTH
from games.models.press import Message as Message
from games.models.push import PushDelivery as PushDelivery
from games.models.push import PushSubscription as PushSubscription
from games.models.seats import Handover as Handover
from games.models.seats import PressEmail as PressEmail
from games.models.seats import Reports as Reports
from games.models.seats import Seat as Seat
from games.models.seats import SeatLink as SeatLink
from games.models.steps import GM_REASON_LENGTH as GM_REASON_LENGTH
from games.models.steps import DiceRoll as DiceRoll
from games.models.steps import Event as Event
from games.models.steps import GMAction as GMAction
from games.models.steps import Order as Order
from games.models.steps import Step as Step
from games.models.webhooks import PlayerPost as PlayerPost
from games.models.webhooks import PlayerWebhook as PlayerWebhook
from games.models.webhooks import Webhook as Webhook
from games.models.webhooks import WebhookDelivery as WebhookDelivery
from games.models.webhooks import WebhookMessage as WebhookMessage
