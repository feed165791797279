// Unit tests read the client's words in English, the reference catalogue, as a first visit would show them.
import { setLanguage } from "../src/i18n/index.svelte";

await setLanguage("en");
