"""What calls add to the layers below them when the app is built (`create_app`): an ongoing call ends, or loses
a participant, with the conversation's change (the conversations' `participants_left` hook), and the jobs that
end unanswered rings and drop participants whose connection is gone (docs/social.md, "Calls")."""

from __future__ import annotations

from meadhall.runtime import Runtime
from meadhall.social.calls.hooks import apply_participants_left
from meadhall.social.calls.jobs import add_call_jobs
from meadhall.social.conversations.hooks import participants_left


def setup(rt: Runtime) -> None:
    participants_left.add("social.calls", apply_participants_left)
    add_call_jobs(rt)
