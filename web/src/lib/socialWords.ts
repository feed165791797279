// Refusals of the friend and conversation operations in words (docs/social.md lists the codes): the
// client knows who the person tried to reach, so it can say more than the service's generic message.

import { ApiError, errorText } from "./api";
import { t } from "../i18n/index.svelte";

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
  // `who` is "" when the person is not known: the sentences then say "this person".
  const name = { known: who ? "yes" : "no", name: who }; // i18n-ignore: select values
  switch (err.code) {
    case "user.not_found":
      return action === "add-friend" ? t("shell.refusal.noSuchUser", name) : t("shell.refusal.noAccount", name);
    case "relationship.blocked":
      if (action === "add-friend" || action === "accept") return t("shell.refusal.blockedFriends", name);
      if (action === "send") return t("shell.refusal.blockedSend");
      return t("shell.refusal.blocked", name);
    case "relationship.already_exists":
      return t("shell.refusal.alreadyFriends", name);
    case "relationship.not_found":
      return t("shell.refusal.nothingBetween", name);
    case "validation.failed": {
      const field = err.details[0]?.field ?? "";
      if (/username|user_id|recipient_id/.test(field) && /own|yourself|another user/i.test(err.details[0]?.message ?? "")) {
        return action === "add-friend" ? t("shell.refusal.ownUsername") : t("shell.refusal.yourself");
      }
      if (field === "recipient_ids") return t("shell.refusal.groupSize", { detail: err.details[0]?.message ?? "" }).trim();
      return errorText(err);
    }
    case "user.imported":
      return t("shell.refusal.imported", name);
    case "dm.full":
      return t("shell.refusal.groupFull");
    case "dm.not_group":
      return t("shell.refusal.notGroup");
    case "perm.denied":
      return action === "rename" || action === "icon" || action === "remove-recipient"
        ? t("shell.refusal.ownerOnly")
        : errorText(err);
    case "recipient.not_found":
      return t("shell.refusal.notInConversation", name);
    case "channel.not_found":
      return t("shell.refusal.noConversation");
    default:
      return errorText(err);
  }
}
