/** The refund link's pure rules (refunds/links.ts): the id, its hash and seal, the URL, what a link's state is, and which addresses a payer may claim with. */
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { checkClaimAddress, claimUrlOf, isLinkId, linkHash, linkStatus, newLinkId, openLinkId, sealLinkId } from "./links.ts";

describe("the link id", () => {
  test("rl_ and 40 characters of 62 letters (238 bits), never the same twice; its hash is hex SHA-256, not the id", () => {
    const a = newLinkId();
    const b = newLinkId();
    expect(a).toMatch(/^rl_[0-9A-Za-z]{40}$/);
    expect(a).not.toBe(b);
    expect(isLinkId(a)).toBe(true);
    expect(linkHash(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(linkHash(a)).toBe(linkHash(a));
    expect(linkHash(a)).not.toBe(linkHash(b));
    expect(linkHash(a)).not.toContain(a.slice(3));
  });

  test("anything else is no link id (checked before a query)", () => {
    for (const bad of ["", "rl_", `rl_${"a".repeat(39)}`, `rl_${"a".repeat(41)}`, `rx_${"a".repeat(40)}`, `rl_${"a".repeat(39)}-`, `rl_${"a".repeat(39)}\0`]) expect(isLinkId(bad)).toBe(false);
  });

  test("sealed for the refund it belongs to: opens with the same key and refund only", () => {
    const key = randomBytes(32);
    const id = newLinkId();
    const sealed = sealLinkId(key, "rf_one", id);
    expect(sealed).not.toContain(id.slice(3));
    expect(openLinkId(key, "rf_one", sealed)).toBe(id);
    expect(() => openLinkId(key, "rf_two", sealed)).toThrow();
    expect(() => openLinkId(randomBytes(32), "rf_one", sealed)).toThrow();
  });

  test("the URL is /refund/{id} under the environment's public base, a path prefix kept", () => {
    expect(claimUrlOf(new URL("http://localhost:4000/"), "rl_x")).toBe("http://localhost:4000/refund/rl_x");
    expect(claimUrlOf(new URL("https://pay.example/service"), "rl_x")).toBe("https://pay.example/service/refund/rl_x");
    expect(claimUrlOf(new URL("https://pay.example/service/"), "rl_x")).toBe("https://pay.example/service/refund/rl_x");
  });
});

describe("a link's status", () => {
  const open = { state: "PENDING" as const, claimed: false, expired: false };
  test("open while PENDING, unclaimed and not expired", () => {
    expect(linkStatus(open)).toBe("open");
  });
  test("a canceled refund's link is canceled, even if it expired too", () => {
    expect(linkStatus({ ...open, state: "CANCELED", expired: true })).toBe("canceled");
  });
  test("claimed once is claimed, whatever the refund did next (also after the expiry)", () => {
    for (const state of ["PENDING", "SENT", "SUCCEEDED", "FAILED"] as const) expect(linkStatus({ state, claimed: true, expired: true })).toBe("claimed");
  });
  test("an unclaimed link past its expiry is expired", () => {
    expect(linkStatus({ ...open, expired: true })).toBe("expired");
  });
});

describe("the address a payer claims with", () => {
  const forbidden = {
    vault: "0x1111111111111111111111111111111111111111",
    tokens: ["0xe2b4152e3b6cc732b52df67f42b2cbdbaee385a5"],
    deposits: ["0x3333333333333333333333333333333333333333"],
    contracts: ["0x4444444444444444444444444444444444444444"],
  };
  test("a well-formed address is taken, lowercase; checksummed or all one case", () => {
    expect(checkClaimAddress(" 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 ", forbidden)).toEqual({ ok: true, address: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" });
    expect(checkClaimAddress("0x70997970c51812dc3a010c7d01b50e0d17dc79c8", forbidden)).toEqual({ ok: true, address: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" });
  });
  test("each refusal names its reason", () => {
    expect(checkClaimAddress("", forbidden)).toEqual({ ok: false, problem: "malformed" });
    expect(checkClaimAddress("0x1234", forbidden)).toEqual({ ok: false, problem: "malformed" });
    expect(checkClaimAddress("alice.eth", forbidden)).toEqual({ ok: false, problem: "malformed" });
    expect(checkClaimAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79c8", forbidden)).toEqual({ ok: false, problem: "checksum" });
    expect(checkClaimAddress(`0x${"0".repeat(40)}`, forbidden)).toEqual({ ok: false, problem: "zero" });
    expect(checkClaimAddress("0x1111111111111111111111111111111111111111", forbidden)).toEqual({ ok: false, problem: "vault" });
    expect(checkClaimAddress("0xE2b4152E3b6cC732b52df67F42B2cbDBaee385a5".toLowerCase(), forbidden)).toEqual({ ok: false, problem: "token" });
    expect(checkClaimAddress("0x3333333333333333333333333333333333333333", forbidden)).toEqual({ ok: false, problem: "deposit" });
    expect(checkClaimAddress("0x4444444444444444444444444444444444444444", forbidden)).toEqual({ ok: false, problem: "contract" });
    // Cut to a length and trimmed, a value with a second address after spaces would pass: it is checked whole.
    expect(checkClaimAddress(`0x90F79bf6EB2c4f870365E785982E1f101E93b906${" ".repeat(158)}0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65`, forbidden)).toEqual({ ok: false, problem: "malformed" });
  });
});
