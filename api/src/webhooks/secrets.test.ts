import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { openSecret, sealSecret } from "./secrets.ts";

test("sealed secrets open only with the same key and the same endpoint id", () => {
  const key = randomBytes(32);
  const sealed = sealSecret(key, "whsec_abc", "whe_1");
  expect(sealed).toMatch(/^v1\./);
  expect(sealed).not.toContain("whsec_abc");
  expect(openSecret(key, sealed, "whe_1")).toBe("whsec_abc");
  expect(sealSecret(key, "whsec_abc", "whe_1")).not.toBe(sealed); // fresh IV each time
  expect(() => openSecret(key, sealed, "whe_2")).toThrow();
  expect(() => openSecret(randomBytes(32), sealed, "whe_1")).toThrow();
  const parts = sealed.split(".");
  const flipped = Buffer.from(parts[3]!, "base64");
  flipped[0]! ^= 1;
  expect(() => openSecret(key, [parts[0], parts[1], parts[2], flipped.toString("base64")].join("."), "whe_1")).toThrow();
  expect(() => openSecret(key, "v0.a.b.c", "whe_1")).toThrow();
});

test("a secret sealed before the one seal (fixed key and IV) still opens, for its endpoint only", () => {
  const key = Buffer.from("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "hex");
  const before = "v1.AAECAwQFBgcICQoL.4apHcJ0zYPqaKOQw7ef5Ug==.MGqlfqa6j33GEK75ia4zNPKk00OaLg84AC6p1Ucgb4BNceKd/LY=";
  expect(openSecret(key, before, "whe_test_vector")).toBe("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  expect(() => openSecret(key, before, "whe_other")).toThrow();
});
