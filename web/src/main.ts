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
void setLanguage(pickLanguage(rememberedLanguage())).finally(() => {
  mount(App, { target: document.getElementById("app")! });
});
registerWorker();
