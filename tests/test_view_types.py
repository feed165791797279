"""The TypedDicts of the hot views name the keys of their OpenAPI schema, in its order: the views are built in
that order (the JSON on the wire), and a key added to a schema but not to its type would go unchecked by mypy."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from meadhall.accounts.schemas import UserSummary
from meadhall.accounts.views import UserSummaryView
from meadhall.guilds.members.schemas import Member
from meadhall.guilds.members.views import MemberView
from meadhall.messages.schemas import Message, Reaction
from meadhall.messages.views import MessageView, ReactionView
from meadhall.social.conversations.schemas import Conversation
from meadhall.social.conversations.views import ConversationView


@pytest.mark.parametrize(("view", "schema"), [
    (UserSummaryView, UserSummary),
    (MemberView, Member),
    (MessageView, Message),
    (ReactionView, Reaction),
    (ConversationView, Conversation),
])
def test_view_type_names_the_schema_keys_in_order(view: Any, schema: type[BaseModel]) -> None:
    assert list(view.__annotations__) == list(schema.model_fields)
    assert view.__required_keys__ == frozenset(schema.model_fields)
