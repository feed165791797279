// The Russian words of the first frame: sign-in, the shell, messages, voice, errors. Fetched before the
// client mounts (src/main.ts).
// An area's keys are prefixed with its name: `chat.reply` is `reply` in chat.json (src/i18n/index.svelte.ts).

import common from "./common.json";
import auth from "./auth.json";
import shell from "./shell.json";
import errors from "./errors.json";
import chat from "./chat.json";
import ui from "./ui.json";
import system from "./system.json";
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
  voice,
  app,
  pwa,
} as Record<string, Record<string, string>>;
