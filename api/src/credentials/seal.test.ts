/**
 * The one seal reads what the two seals before it wrote (webhook secrets, Idempotency-Key
 * records, flash cookies: all already stored), and writes the same form, so those values open
 * on either side of an upgrade. The vectors below were sealed by the code this module replaced
 * (webhooks/secrets.ts and db/idempotency-keys.ts), with the key and IV fixed; they are pasted
 * here as bytes so that a change of format cannot go unnoticed.
 */
import { describe, expect, test } from "bun:test";
import { createDecipheriv, randomBytes } from "node:crypto";
import { seal, unseal, type SealFormat } from "./seal.ts";

/** The fixed key and IV the vectors were sealed with. */
const KEY = Buffer.from("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "hex");
const IV = Buffer.from("000102030405060708090a0b", "hex");

const WEBHOOK = {
  format: { label: "v1", aad: "whe_test_vector" } satisfies SealFormat,
  plain: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  sealed: "v1.AAECAwQFBgcICQoL.4apHcJ0zYPqaKOQw7ef5Ug==.MGqlfqa6j33GEK75ia4zNPKk00OaLg84AC6p1Ucgb4BNceKd/LY=",
};
const RECORD = {
  format: { label: "v2" } satisfies SealFormat,
  plain: '{"paymentSessionToken":"pst_test_vector"}',
  sealed: "v2.AAECAwQFBgcICQoL.3GGhLRC1iABuBbwY47wS5g==.PCCmeryIp3X5EvL4woAXA9e57FGeWWVeSBSR2mkMc8ZeZsuf265gugk=",
};
/** An idempotency record from before labels: the same parts without one. */
const UNLABELLED = { format: { label: null } satisfies SealFormat, plain: RECORD.plain, sealed: RECORD.sealed.slice("v2.".length) };

/** The parts of a sealed value, decoded. */
const partsOf = (sealed: string) => sealed.split(".").slice(-3).map((p) => Buffer.from(p, "base64")) as [Buffer, Buffer, Buffer];
/** `sealed` with bit 0 of byte `at` of part `part` (0 IV, 1 tag, 2 ciphertext) flipped. */
function flipped(sealed: string, part: 0 | 1 | 2, at = 0): string {
  const labels = sealed.split(".").slice(0, -3);
  const parts = partsOf(sealed);
  parts[part]![at]! ^= 1;
  return [...labels, ...parts.map((b) => b.toString("base64"))].join(".");
}

describe("values sealed before the one seal", () => {
  for (const [name, v] of Object.entries({ "a webhook secret (v1, bound to its endpoint)": WEBHOOK, "an idempotency record (v2)": RECORD, "an idempotency record without a label": UNLABELLED })) {
    test(`${name} opens, and carries the fixed IV`, () => {
      expect(unseal(KEY, v.sealed, v.format)).toBe(v.plain);
      expect(partsOf(v.sealed)[0].equals(IV)).toBe(true);
    });
    test(`${name}: a flipped bit in the IV, the tag or the ciphertext does not open`, () => {
      const [iv, tag, ct] = partsOf(v.sealed);
      for (const [part, length] of [[0, iv.length], [1, tag.length], [2, ct.length]] as const) {
        for (const at of [0, length - 1]) expect(() => unseal(KEY, flipped(v.sealed, part, at), v.format)).toThrow();
      }
    });
    test(`${name} does not open under another key`, () => {
      expect(() => unseal(Buffer.alloc(32, 7), v.sealed, v.format)).toThrow();
    });
  }

  test("a value opens only as what it was sealed as: its label and its associated data", () => {
    expect(() => unseal(KEY, WEBHOOK.sealed, { label: "v1", aad: "whe_other" })).toThrow();
    expect(() => unseal(KEY, WEBHOOK.sealed, { label: "v1" })).toThrow();
    expect(() => unseal(KEY, WEBHOOK.sealed, { label: "v2", aad: WEBHOOK.format.aad })).toThrow();
    expect(() => unseal(KEY, RECORD.sealed, { label: "v2", aad: "x" })).toThrow();
    expect(() => unseal(KEY, RECORD.sealed, { label: null })).toThrow(); // a labelled value is not an unlabelled one
    expect(() => unseal(KEY, UNLABELLED.sealed, RECORD.format)).toThrow();
  });

  test("a truncated tag, a missing or an extra part, or a part of the wrong length does not open", () => {
    const [label, iv, tag, ct] = WEBHOOK.sealed.split(".") as [string, string, string, string];
    const short = Buffer.from(tag, "base64").subarray(0, 12).toString("base64");
    const longIv = Buffer.concat([Buffer.from(iv, "base64"), Buffer.alloc(4)]).toString("base64");
    for (const bad of [[label, iv, short, ct], [label, iv, tag], [label, iv, tag, ct, ct], [label, longIv, tag, ct], [label, "", tag, ct], [label, iv, "", ct]]) {
      expect(() => unseal(KEY, bad.join("."), WEBHOOK.format)).toThrow();
    }
    expect(() => unseal(KEY, "v0.a.b.c", WEBHOOK.format)).toThrow();
    expect(() => unseal(KEY, "", WEBHOOK.format)).toThrow();
  });
});

describe("sealing", () => {
  /** How the code before the one seal opened a value: kept here as the format's independent reader. */
  function openAsBefore(key: Buffer, sealed: string, aad?: string): string {
    const [iv, tag, ct] = partsOf(sealed);
    const decipher = createDecipheriv("aes-256-gcm", key, iv);
    if (aad !== undefined) decipher.setAAD(Buffer.from(aad, "utf8"));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ct), decipher.final()]).toString("utf8");
  }

  test("writes `<label>.<iv>.<tag>.<ciphertext>` in base64: a fresh 12-byte IV, a 16-byte tag, as the code before read it", () => {
    for (const v of [WEBHOOK, RECORD]) {
      const sealed = seal(KEY, v.plain, v.format);
      const parts = sealed.split(".");
      expect(parts.length).toBe(4);
      expect(parts[0]).toBe(v.format.label);
      for (const p of parts.slice(1)) expect(Buffer.from(p, "base64").toString("base64")).toBe(p);
      const [iv, tag, ct] = partsOf(sealed);
      expect([iv.length, tag.length, ct.length]).toEqual([12, 16, Buffer.byteLength(v.plain)]);
      expect(sealed).not.toContain(v.plain);
      expect(openAsBefore(KEY, sealed, (v.format as SealFormat).aad)).toBe(v.plain);
      expect(unseal(KEY, sealed, v.format)).toBe(v.plain);
      expect(seal(KEY, v.plain, v.format)).not.toBe(sealed); // a fresh IV every time
    }
  });

  test("any text round-trips, and a flipped bit of a fresh seal does not open", () => {
    const key = randomBytes(32);
    for (const plain of ["", "é ✓ \u0000 end", "x".repeat(10_000)]) {
      const sealed = seal(key, plain, { label: "v1", aad: "bound" });
      expect(unseal(key, sealed, { label: "v1", aad: "bound" })).toBe(plain);
      if (plain) expect(() => unseal(key, flipped(sealed, 2, plain.length - 1), { label: "v1", aad: "bound" })).toThrow();
      expect(() => unseal(key, flipped(sealed, 1), { label: "v1", aad: "bound" })).toThrow();
    }
  });

  test("a key that is not 32 bytes is refused", () => {
    expect(() => seal(Buffer.alloc(16), "x", { label: "v1" })).toThrow();
  });
});
