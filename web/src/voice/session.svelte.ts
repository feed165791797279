// The one voice session of the page: a reactive view the voice screens read, and the controller that
// acts on it (controller.ts), fed with the gateway's events.

import { call } from "../lib/api";
import { onDispatch, session, store } from "../lib/store.svelte";
import { VoiceController, createView } from "./controller";
import { connectLiveKit } from "./media";
import { pageMixer } from "./mixer";

export const voice = $state(createView());

export const controller = new VoiceController({
  state: store,
  view: voice,
  call,
  connect: connectLiveKit,
  mixer: pageMixer(),
  showing: (channelId) => document.visibilityState === "visible" && location.pathname.endsWith(`/${channelId}`),
});

onDispatch((type, data) => controller.onEvent(type, data));

// Signing out ends the voice context with the session. Signed in, whether the instance has voice at all is
// asked at once, so voice rooms and call buttons can say so before anyone tries.
$effect.root(() => {
  $effect(() => {
    if (session.status === "signed-out" && voice.kind) controller.reset();
  });
  $effect(() => {
    if (session.status === "signed-in" && voice.available === null) void controller.voiceEnabled();
  });
});
