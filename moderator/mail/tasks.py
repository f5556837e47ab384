from __future__ import annotations

from celery import shared_task

from moderator.mail import outbox


@shared_task(name="mail.send_email", acks_late=True, reject_on_worker_lost=True)
def send_email(*, outbound_id: int) -> str:
    return outbox.send(outbound_id)
