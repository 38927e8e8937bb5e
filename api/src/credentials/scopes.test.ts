/** The scope catalogue's pure rules: who may call what, and reading typed scopes and expiries. */
import { describe, expect, test } from "bun:test";
import { allows, expiryIn, isExpired, isScope, MAX_EXPIRY_DAYS, parseScopes, SCOPE_NAMES } from "./scopes.ts";

describe("allows", () => {
  test("full access (null) may call everything, even a route that declares no scope", () => {
    expect(allows(null, "settlement:write")).toBe(true);
    expect(allows(null, undefined)).toBe(true);
  });
  test("a restricted key only what it holds, and never a route without a declared scope", () => {
    expect(allows(["sessions:read"], "sessions:read")).toBe(true);
    expect(allows(["sessions:read"], "sessions:write")).toBe(false);
    expect(allows([], "sessions:read")).toBe(false);
    expect(allows(SCOPE_NAMES, undefined)).toBe(false);
  });
});

describe("parseScopes", () => {
  test("known scopes, trimmed, deduplicated, in catalogue order", () => {
    expect(parseScopes([" refunds:read", "sessions:write", "refunds:read", ""])).toEqual({ ok: true, scopes: ["sessions:write", "refunds:read"] });
  });
  test("an unknown scope or none at all is refused with a message that says what is allowed", () => {
    const bad = parseScopes(["sessions:read", "sessions:delete"]);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.problem).toContain("sessions:delete");
    if (!bad.ok) expect(bad.problem).toContain("settlement:write");
    expect(parseScopes([" ", ""]).ok).toBe(false);
    expect(isScope("toString")).toBe(false);
  });
});

describe("expiryIn and isExpired", () => {
  const now = new Date("2026-01-01T00:00:00Z");
  test("whole days from 1 to the maximum", () => {
    expect(expiryIn("30", now)).toEqual({ ok: true, expiresAt: new Date("2026-01-31T00:00:00Z") });
    expect(expiryIn(String(MAX_EXPIRY_DAYS), now).ok).toBe(true);
    for (const bad of ["0", "-1", "1.5", "1e3", "", "x", String(MAX_EXPIRY_DAYS + 1)]) expect({ bad, ok: expiryIn(bad, now).ok }).toEqual({ bad, ok: false });
  });
  test("a key is expired from its expiry on; never without one", () => {
    expect(isExpired(null, Date.now())).toBe(false);
    expect(isExpired(now, now.getTime())).toBe(true);
    expect(isExpired(now, now.getTime() - 1)).toBe(false);
  });
});
