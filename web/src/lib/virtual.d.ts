// The build-time emoji list (web/plugins/emoji-data.ts).
declare module "virtual:emoji-data" {
  /** Group names in order (smileys & emotion, people & body, …). */
  export const groups: string[];
  /** `[emoji, name, shortcodes, group index]` in the Unicode order. */
  export const emojis: [string, string, string[], number][];
}
