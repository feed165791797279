// The English words of the screens that load on demand (settings, server settings, administration):
// fetched right after the first frame, and awaited by those screens before they show.
// An area's keys are prefixed with its name: `chat.reply` is `reply` in chat.json (src/i18n/index.svelte.ts).

import settings from "./settings.json";
import guild from "./guild.json";
import roles from "./roles.json";
import audit from "./audit.json";
import admin from "./admin.json";

export default {
  settings,
  guild,
  roles,
  audit,
  admin,
} as Record<string, Record<string, string>>;
