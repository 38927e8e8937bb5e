/**
 * The body validator's answers, each as the API has always given it (the hand-written validator
 * this one replaced gave these very answers, and the two were run side by side over 40,000 bad
 * bodies of every request schema before it went): which problem is told first, its code, the
 * parameter it names and its message. Bodies are JSON text, as they arrive.
 */
import { describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { ApiError } from "../errors.ts";
import { compiledCheck } from "../schema-check.ts";
import { AuthorizationBody } from "./authorizations.schemas.ts";
import { CreateSessionBody } from "./payment-sessions.schemas.ts";
import { EmptyBody } from "./schemas.ts";
import { SettlementAddressBody } from "./settlement-addresses.schemas.ts";
import { validateBody } from "./validate.ts";
import { CreateWebhookEndpointBody, RotateSecretBody, UpdateWebhookEndpointBody } from "./webhook-endpoints.schemas.ts";

const ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const AUTH = { chainId: 31337, from: ADDRESS, value: "1", validAfter: "0", validBefore: "1", nonce: "0x" + "ab".repeat(32), signature: "0x" + "cd".repeat(65) };
const SESSION = { amount: "1.00", currency: "USD" };
const json = (v: unknown) => JSON.stringify(v);

type Answer = "ok" | [code: string, param: string | undefined, message: string];

function answer(schema: TSchema, body: unknown): Answer {
  try {
    validateBody(schema, body);
    return "ok";
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return [e.code, e.param, e.message];
  }
}

const NOT_OBJECT: Answer = ["body_not_object", undefined, "The request body must be a JSON object."];

const CASES: [name: string, schema: TSchema, body: string, answer: Answer][] = [
  ["a body that is null", EmptyBody, "null", NOT_OBJECT],
  ["a body that is an array", CreateWebhookEndpointBody, "[]", NOT_OBJECT],
  ["a body that is a string", CreateWebhookEndpointBody, '"x"', NOT_OBJECT],
  ["a body that is a number", SettlementAddressBody, "1", NOT_OBJECT],
  ["an empty body where none is taken", EmptyBody, "{}", "ok"],
  ["a field where none is taken", EmptyBody, '{"reason":"x"}', ["parameter_unknown", "reason", "reason is not a parameter of this endpoint."]],
  ["an unknown field with an empty name", EmptyBody, '{"":1}', ["parameter_unknown", undefined, " is not a parameter of this endpoint."]],
  ["__proto__ as a field", CreateWebhookEndpointBody, '{"url":"http://x","__proto__":1}', ["parameter_unknown", "__proto__", "__proto__ is not a parameter of this endpoint."]],
  ["an unknown field before a missing one", CreateWebhookEndpointBody, '{"x":1}', ["parameter_unknown", "x", "x is not a parameter of this endpoint."]],
  ["an unknown field before a bad one", CreateSessionBody, '{"amount":1,"zzz":1}', ["parameter_unknown", "zzz", "zzz is not a parameter of this endpoint."]],
  ["a missing field", CreateWebhookEndpointBody, '{"description":"x"}', ["parameter_missing", "url", "url is required."]],
  ["missing fields, in the schema's order", CreateSessionBody, '{"referenceId":""}', ["parameter_missing", "amount", "amount is required."]],
  ["a missing field before a bad one", CreateSessionBody, '{"currency":5}', ["parameter_missing", "amount", "amount is required."]],
  ["bad fields, in the schema's order", CreateSessionBody, '{"currency":2,"amount":1}', ["parameter_invalid", "amount", "amount must be a string, not a number."]],
  ["a string that is a number", CreateWebhookEndpointBody, '{"url":1}', ["parameter_invalid", "url", "url must be a string, not a number."]],
  ["a string that is null", CreateWebhookEndpointBody, '{"url":null}', ["parameter_invalid", "url", "url must be a string, not null."]],
  ["a string that is an array", CreateWebhookEndpointBody, '{"url":[]}', ["parameter_invalid", "url", "url must be a string, not an array."]],
  ["a string that is an object", CreateWebhookEndpointBody, '{"url":{}}', ["parameter_invalid", "url", "url must be a string, not a object."]],
  ["a string that is true", CreateWebhookEndpointBody, '{"url":true}', ["parameter_invalid", "url", "url must be a string, not a boolean."]],
  ["a string too long", CreateWebhookEndpointBody, json({ url: "http://x", description: "d".repeat(257) }), ["parameter_invalid", "description", "description must be at most 256 characters."]],
  ["a string too short", CreateSessionBody, json({ ...SESSION, referenceId: "" }), ["parameter_invalid", "referenceId", "referenceId must be at least 1 characters."]],
  ["a string with NUL", CreateWebhookEndpointBody, '{"url":"http://x","description":"a\\u0000b"}', ["parameter_invalid", "description", "description must not contain NUL characters."]],
  ["NUL before the length", CreateWebhookEndpointBody, json({ url: "http://x", description: "\u0000" + "x".repeat(300) }), ["parameter_invalid", "description", "description must not contain NUL characters."]],
  ["a lone high surrogate", CreateWebhookEndpointBody, '{"url":"http://x","description":"\\ud800"}', ["parameter_invalid", "description", "description must be valid Unicode text."]],
  ["a lone low surrogate", SettlementAddressBody, '{"address":"x\\udc00"}', ["parameter_invalid", "address", "address must be valid Unicode text."]],
  ["a surrogate pair", CreateWebhookEndpointBody, '{"url":"http://x","description":"\\ud83d\\ude00"}', "ok"],
  ["a pattern not matched", AuthorizationBody, json({ ...AUTH, nonce: "0x12" }), ["parameter_invalid", "nonce", "nonce has an invalid format."]],
  ["a length before the pattern", AuthorizationBody, json({ ...AUTH, signature: "0x" + "z".repeat(5000) }), ["parameter_invalid", "signature", "signature must be at most 4098 characters."]],
  ["a whole number that is a fraction", CreateSessionBody, json({ ...SESSION, expiresInSeconds: 1.5 }), ["parameter_invalid", "expiresInSeconds", "expiresInSeconds must be a whole number, not a number."]],
  ["a whole number that is a string", CreateSessionBody, json({ ...SESSION, expiresInSeconds: "60" }), ["parameter_invalid", "expiresInSeconds", "expiresInSeconds must be a whole number, not a string."]],
  ["a whole number below its minimum", CreateSessionBody, json({ ...SESSION, expiresInSeconds: 59 }), ["parameter_invalid", "expiresInSeconds", "expiresInSeconds must be at least 60."]],
  ["a whole number above its maximum", RotateSecretBody, '{"overlapSeconds":604801}', ["parameter_invalid", "overlapSeconds", "overlapSeconds must be at most 604800."]],
  ["a whole number at its bound", RotateSecretBody, '{"overlapSeconds":0}', "ok"],
  ["a negative whole number", RotateSecretBody, '{"overlapSeconds":-1}', ["parameter_invalid", "overlapSeconds", "overlapSeconds must be at least 0."]],
  ["a boolean that is a string", UpdateWebhookEndpointBody, '{"enabled":"true"}', ["parameter_invalid", "enabled", "enabled must be true or false, not a string."]],
  ["a record that is a number", CreateSessionBody, json({ ...SESSION, metadata: 5 }), ["parameter_invalid", "metadata", "metadata must be an object, not a number."]],
  ["a record that is an array", CreateSessionBody, json({ ...SESSION, metadata: [] }), ["parameter_invalid", "metadata", "metadata must be an object, not an array."]],
  ["a record entry of the wrong type", CreateSessionBody, json({ ...SESSION, metadata: { a: 1 } }), ["parameter_invalid", "metadata.a", "metadata.a must be a string, not a number."]],
  ["a record entry too long", CreateSessionBody, json({ ...SESSION, metadata: { a: "v".repeat(501) } }), ["parameter_invalid", "metadata.a", "metadata.a must be at most 500 characters."]],
  ["record entries, in the body's order", CreateSessionBody, json({ ...SESSION, metadata: { b: 2, a: 1 } }), ["parameter_invalid", "metadata.b", "metadata.b must be a string, not a number."]],
  ["a record key that is not text", CreateSessionBody, '{"amount":"1.00","currency":"USD","metadata":{"\\u0000":"x"}}', ["parameter_invalid", "metadata", "metadata has a key that is not valid text."]],
  ["a record key with a slash and a tilde", CreateSessionBody, json({ ...SESSION, metadata: { "a/b~c": 1 } }), ["parameter_invalid", "metadata.a/b~c", "metadata.a/b~c must be a string, not a number."]],
  ["a body key that is not text", EmptyBody, '{"\\ud800":1}', ["parameter_invalid", undefined, "body has a key that is not valid text."]],
  ["a good body", AuthorizationBody, json(AUTH), "ok"],
];

describe("validateBody", () => {
  for (const [name, schema, body, expected] of CASES) {
    test(name, () => expect(answer(schema, JSON.parse(body))).toEqual(expected));
  }

  test("a field the dashboard's form left undefined is missing, like an absent one", () => {
    expect(answer(CreateWebhookEndpointBody, { url: undefined })).toEqual(["parameter_missing", "url", "url is required."]);
    expect(answer(UpdateWebhookEndpointBody, { url: undefined, enabled: true })).toBe("ok");
  });

  test("hands the body back as it came, typed by its schema", () => {
    const body = JSON.parse(json({ address: ADDRESS }));
    const checked = validateBody(SettlementAddressBody, body);
    const address: string = checked.address;
    expect(checked).toBe(body);
    expect(address).toBe(ADDRESS);
    // @ts-expect-error: SettlementAddressBody has no chainId
    expect(checked.chainId).toBeUndefined();
  });

  test("compiles each schema once", () => {
    validateBody(RotateSecretBody, {});
    expect(compiledCheck(RotateSecretBody)).toBe(compiledCheck(RotateSecretBody));
  });
});
