// "Accept invitation" on the public invitation page (OpenAPI: invitePage): joins, then opens the room in the
// web client. A file of its own because the
// page's Content-Security-Policy allows scripts from the service only (`script-src 'self'`), never inline.
// The request is a same-origin fetch that carries the session cookie; the browser adds the Origin header,
// which the service compares with PUBLIC_URL (docs/architecture.md).
"use strict";

(function () {
  const button = document.getElementById("accept-invitation");
  const status = document.getElementById("invite-status");
  if (!button || button.tagName !== "BUTTON" || !status) {
    return;
  }

  // The words come in the page's language, from the status element's data attributes (meadhall/core/words/).
  const words = status.dataset;

  function fill(text, values) {
    return text.replace(/\{(\w+)\}/g, function (whole, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole;
    });
  }

  function say(text, link) {
    status.textContent = text;
    if (link) {
      const a = document.createElement("a");
      a.href = link.href;
      a.textContent = link.text;
      status.append(" ", a);
    }
  }

  const signIn = { href: "/login?next=" + encodeURIComponent(location.pathname), text: words.signIn || "Sign in" };

  async function errorMessage(response) {
    try {
      const body = await response.json();
      if (body && body.error && typeof body.error.message === "string") {
        return body.error.message;
      }
    } catch (_) {
      // Not the error envelope (a proxy's page, say): fall back to the status below.
    }
    return fill(words.answered || "The server answered {status}.", { status: response.status });
  }

  button.addEventListener("click", async function () {
    button.disabled = true;
    say(words.joining || "Joining…");
    let response;
    try {
      response = await fetch(button.dataset.endpoint, {
        method: "POST",
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
    } catch (_) {
      say(words.unreachable || "The server could not be reached. Check your connection and try again.");
      button.disabled = false;
      return;
    }
    if (response.ok) {
      const body = await response.json();
      const guildId = body.guild_id || button.dataset.guildId;
      const room = "/channels/" + guildId + "/" + button.dataset.channelId;
      say(words.joined || "You joined the server.", { href: room, text: words.openIt || "Open it" });
      button.hidden = true;
      // Into the web client, at the room the invitation was made for (docs/client.md).
      location.assign(room);
      return;
    }
    if (response.status === 401) {
      say(words.signedOut || "You are not signed in any more. Sign in, then accept the invitation again.", signIn);
      return;
    }
    say(fill(words.refused || "The invitation could not be accepted: {reason}", { reason: await errorMessage(response) }));
    // A refusal that may pass (rate limit, a server error) can be tried again; the others cannot.
    button.disabled = !(response.status === 429 || response.status >= 500);
  });
})();
