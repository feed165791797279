import { describe, expect, it } from "vitest";
import { nameInServiceSentence } from "../src/components/systemNames";

describe("the name in a system message's own sentence", () => {
  it("is what the service's sentence starts with", () => {
    expect(nameInServiceSentence("member_ban", null, "Loki was banned from the server.")).toBe("Loki");
    expect(nameInServiceSentence("member_join", "public", "Ása the Wise joined the public server.")).toBe("Ása the Wise");
    expect(nameInServiceSentence("member_join", null, "Ása joined the server.")).toBe("Ása");
  });

  it("is unknown for a sentence the service did not write that way", () => {
    expect(nameInServiceSentence("member_ban", null, "Loki left the server.")).toBeNull();
    expect(nameInServiceSentence("something_new", null, "Loki did a new thing.")).toBeNull();
    expect(nameInServiceSentence("member_leave", null, " left the server.")).toBeNull();
  });
});
