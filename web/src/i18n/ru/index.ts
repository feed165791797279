// Every area of the Russian catalogue, merged into one chunk the client loads on demand
// (src/i18n/index.svelte.ts). An area's keys are prefixed with its name: `chat.reply` is `reply` in chat.json.

import common from "./common.json";
import auth from "./auth.json";
import shell from "./shell.json";
import errors from "./errors.json";
import chat from "./chat.json";
import ui from "./ui.json";
import system from "./system.json";
import settings from "./settings.json";
import guild from "./guild.json";
import roles from "./roles.json";
import audit from "./audit.json";
import admin from "./admin.json";
import voice from "./voice.json";
import app from "./app.json";
import pwa from "./pwa.json";

export default {
  common,
  auth,
  shell,
  errors,
  chat,
  ui,
  system,
  settings,
  guild,
  roles,
  audit,
  admin,
  voice,
  app,
  pwa,
} as Record<string, Record<string, string>>;
