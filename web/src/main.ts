import { mount } from "svelte";
import "./app.css";
import "./lib/viewport"; // phones: dynamic viewport, safe areas, the keyboard (phone.css)
import App from "./App.svelte";
import { pickLanguage, rememberedLanguage, setLanguage } from "./i18n/index.svelte";
import { applyTheme } from "./lib/theme";
import { registerWorker } from "./lib/worker";

applyTheme();
// The words come before the first frame: the language of the last visit (the account's), else the
// browser's. Once the account is known, its locale decides (App.svelte follows it).
// Words that cannot be fetched (no network, and no worker kept them) do not keep the client from starting.
void setLanguage(pickLanguage(rememberedLanguage()))
  .catch(() => undefined)
  .then(() => mount(App, { target: document.getElementById("app")! }));
registerWorker();
