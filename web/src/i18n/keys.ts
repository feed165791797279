// The type of every message key, from the English catalogue (the reference): `t()` accepts nothing else,
// so svelte-check fails on a key that does not exist. Each area's keys carry the area's name as prefix.

import type common from "./en/common.json";
import type auth from "./en/auth.json";
import type shell from "./en/shell.json";
import type errors from "./en/errors.json";
import type chat from "./en/chat.json";
import type ui from "./en/ui.json";
import type system from "./en/system.json";
import type settings from "./en/settings.json";
import type guild from "./en/guild.json";
import type roles from "./en/roles.json";
import type audit from "./en/audit.json";
import type admin from "./en/admin.json";
import type voice from "./en/voice.json";
import type app from "./en/app.json";
import type pwa from "./en/pwa.json";

type Area<A extends string, C> = `${A}.${keyof C & string}`;

export type Key =
  | Area<"common", typeof common>
  | Area<"auth", typeof auth>
  | Area<"shell", typeof shell>
  | Area<"errors", typeof errors>
  | Area<"chat", typeof chat>
  | Area<"ui", typeof ui>
  | Area<"system", typeof system>
  | Area<"settings", typeof settings>
  | Area<"guild", typeof guild>
  | Area<"roles", typeof roles>
  | Area<"audit", typeof audit>
  | Area<"admin", typeof admin>
  | Area<"voice", typeof voice>
  | Area<"app", typeof app>
  | Area<"pwa", typeof pwa>;
