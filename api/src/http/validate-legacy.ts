/**
 * Checks a parsed JSON body against the route's TypeBox schema (the same schema Swagger
 * shows), and turns the first problem into a catalogue error naming the parameter:
 * unknown → parameter_unknown, absent → parameter_missing, wrong type or bounds →
 * parameter_invalid. Our own checker rather than Elysia's, so every message is ours and
 * the order is stable: unknown fields first, then missing, then each field in schema order.
 * It reads the subset of JSON Schema our request schemas use.
 */
import type { Address } from "viem";
import { ApiError } from "../errors.ts";
import { checkAddressInput } from "../sessions/deposits.ts";

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  patternProperties?: Record<string, Schema>;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minProperties?: number;
  maxProperties?: number;
  enum?: unknown[];
  anyOf?: Schema[];
  const?: unknown;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function validateBody<T>(schema: unknown, value: unknown): T {
  check(schema as Schema, value, "");
  return value as T;
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return `a ${typeof v}`;
}

function fail(code: "parameter_invalid" | "parameter_missing" | "parameter_unknown", param: string, message: string): never {
  throw new ApiError(code, message, param || undefined);
}

function check(schema: Schema, value: unknown, path: string): void {
  const name = path || "body";
  if (schema.anyOf) {
    for (const option of schema.anyOf) {
      try {
        check(option, value, path);
        return;
      } catch {
        // try the next option
      }
    }
    const consts = schema.anyOf.filter((o) => "const" in o).map((o) => JSON.stringify(o.const));
    fail("parameter_invalid", path, consts.length ? `${name} must be one of ${consts.join(", ")}.` : `${name} has an invalid value.`);
  }
  if ("const" in schema) {
    if (value !== schema.const) fail("parameter_invalid", path, `${name} must be ${JSON.stringify(schema.const)}.`);
    return;
  }
  switch (schema.type) {
    case "object":
      return checkObject(schema, value, path);
    case "string": {
      if (typeof value !== "string") fail("parameter_invalid", path, `${name} must be a string, not ${describe(value)}.`);
      // Postgres text cannot hold NUL, nor jsonb a lone UTF-16 surrogate: refuse them here
      // rather than fail in the database.
      if (value.includes("\u0000")) fail("parameter_invalid", path, `${name} must not contain NUL characters.`);
      if (LONE_SURROGATE.test(value)) fail("parameter_invalid", path, `${name} must be valid Unicode text.`);
      if (schema.minLength !== undefined && value.length < schema.minLength)
        fail("parameter_invalid", path, `${name} must be at least ${schema.minLength} characters.`);
      if (schema.maxLength !== undefined && value.length > schema.maxLength)
        fail("parameter_invalid", path, `${name} must be at most ${schema.maxLength} characters.`);
      if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value))
        fail("parameter_invalid", path, `${name} has an invalid format.`);
      if (schema.enum && !schema.enum.includes(value))
        fail("parameter_invalid", path, `${name} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}.`);
      return;
    }
    case "integer":
    case "number": {
      const ok = typeof value === "number" && Number.isFinite(value) && (schema.type === "number" || Number.isInteger(value));
      if (!ok) fail("parameter_invalid", path, `${name} must be ${schema.type === "integer" ? "a whole number" : "a number"}, not ${describe(value)}.`);
      if (schema.minimum !== undefined && value < schema.minimum) fail("parameter_invalid", path, `${name} must be at least ${schema.minimum}.`);
      if (schema.maximum !== undefined && value > schema.maximum) fail("parameter_invalid", path, `${name} must be at most ${schema.maximum}.`);
      return;
    }
    case "boolean":
      if (typeof value !== "boolean") fail("parameter_invalid", path, `${name} must be true or false, not ${describe(value)}.`);
      return;
    default:
      return;
  }
}

function checkObject(schema: Schema, value: unknown, path: string): void {
  const name = path || "body";
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    if (!path) throw new ApiError("body_not_object");
    fail("parameter_invalid", path, `${name} must be an object, not ${describe(value)}.`);
  }
  const obj = value as Record<string, unknown>;
  const props = schema.properties ?? {};
  const patterns = Object.entries(schema.patternProperties ?? {}).map(([p, s]) => [new RegExp(p), s] as const);
  const keys = Object.keys(obj);
  if (schema.maxProperties !== undefined && keys.length > schema.maxProperties)
    fail("parameter_invalid", path, `${name} may have at most ${schema.maxProperties} entries.`);
  for (const key of keys) {
    if (key.includes("\u0000") || LONE_SURROGATE.test(key)) fail("parameter_invalid", path, `${name} has a key that is not valid text.`);
    if (Object.hasOwn(props, key)) continue;
    const match = patterns.find(([re]) => re.test(key));
    if (match) {
      check(match[1], obj[key], join(path, key));
      continue;
    }
    if (schema.additionalProperties === false) {
      fail("parameter_unknown", join(path, key), `${join(path, key)} is not a parameter of this endpoint.`);
    }
  }
  for (const key of schema.required ?? []) {
    if (obj[key] === undefined) fail("parameter_missing", join(path, key), `${join(path, key)} is required.`);
  }
  for (const [key, sub] of Object.entries(props)) {
    if (obj[key] === undefined) continue;
    check(sub, obj[key], join(path, key));
  }
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** An address parameter's check lives with the sessions, where the API's routes and the dashboard's actions both reach it. */
export { addressParam } from "../sessions/address-param.ts";
