// The name inside a system message's own sentence. The service writes each system message's `content` in
// English, "<display name> <fixed words>" (meadhall/messages/system.py); the client shows its own sentence
// in the reader's language instead, and needs the name for it. A person it still knows is named from the
// store; one it no longer knows (a banned or departed member) only by that sentence, read here.

/** The fixed end of each of the service's sentences, by event (and `via` for a public join). */
// i18n-ignore: the service's English sentences, only read to find the name in them, never shown
const SERVICE_ENDS: Record<string, string> = {
  channel_create: " created this room.", // i18n-ignore: the service's sentence, parsed
  member_join: " joined the server.", // i18n-ignore: the service's sentence, parsed
  member_join_public: " joined the public server.", // i18n-ignore: the service's sentence, parsed
  member_leave: " left the server.", // i18n-ignore: the service's sentence, parsed
  member_kick: " was removed from the server.", // i18n-ignore: the service's sentence, parsed
  member_ban: " was banned from the server.", // i18n-ignore: the service's sentence, parsed
  voice_join: " joined the voice room.", // i18n-ignore: the service's sentence, parsed
};

/** The display name the service's sentence starts with, or null when the sentence is not one of its own. */
export function nameInServiceSentence(type: string, via: string | null | undefined, content: string): string | null {
  const end = SERVICE_ENDS[type === "member_join" && via === "public" ? "member_join_public" : type];
  if (!end || !content.endsWith(end) || content.length === end.length) return null;
  return content.slice(0, -end.length);
}
