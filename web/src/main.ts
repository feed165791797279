import { mount } from "svelte";
import "./app.css";
import App from "./App.svelte";
import { applyTheme } from "./lib/theme";

applyTheme();
mount(App, { target: document.getElementById("app")! });
