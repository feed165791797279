// Refusals of the friend and conversation operations in words (docs/social.md lists the codes): the
// client knows who the person tried to reach, so it can say more than the service's generic message.

import { ApiError, errorText } from "./api";

export type SocialAction =
  | "add-friend"
  | "accept"
  | "block"
  | "remove-relationship"
  | "open"
  | "create-group"
  | "add-recipient"
  | "remove-recipient"
  | "rename"
  | "icon"
  | "send";

/** The refusal of `action` aimed at `who` (a username or display name, when there is one) in words. */
export function refusal(err: unknown, action: SocialAction, who = ""): string {
  if (!(err instanceof ApiError)) return errorText(err);
  const name = who ? `“${who}”` : "this person";
  switch (err.code) {
    case "user.not_found":
      return action === "add-friend" ? `Nobody here is called ${name}. Check the spelling of the username.` : `${cap(name)} no longer has an account.`;
    case "relationship.blocked":
      if (action === "add-friend" || action === "accept") return `You cannot be friends with ${name}: one of you has blocked the other.`;
      if (action === "send") return "Messages cannot be sent here: one of you has blocked the other.";
      return `Not possible with ${name}: one of you has blocked the other.`;
    case "relationship.already_exists":
      return `You are already friends with ${name}, or a friend request between you is waiting.`;
    case "relationship.not_found":
      return `There is nothing between you and ${name} any more.`;
    case "validation.failed": {
      const field = err.details[0]?.field ?? "";
      if (/username|user_id|recipient_id/.test(field) && /own|yourself|another user/i.test(err.details[0]?.message ?? "")) {
        return action === "add-friend" ? "That is your own username: you cannot add yourself as a friend." : "You cannot do this with yourself.";
      }
      if (field === "recipient_ids") return `A group needs 2 to 9 other people (you are not one of them). ${err.details[0]?.message ?? ""}`.trim();
      return err.message;
    }
    case "user.imported":
      return `${cap(name)} is an imported author: their messages were brought from another service and they have not joined yet.`;
    case "dm.full":
      return "A group has at most 10 people; remove someone first.";
    case "dm.not_group":
      return "This only works in a group conversation.";
    case "perm.denied":
      return action === "rename" || action === "icon" || action === "remove-recipient"
        ? "Only the owner of the group can do this."
        : err.message;
    case "recipient.not_found":
      return `${cap(name)} is not in this conversation any more.`;
    case "channel.not_found":
      return "This conversation no longer exists, or you are not in it.";
    default:
      return err.message;
  }
}

function cap(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
