/**
 * Checks a parsed JSON body against the route's TypeBox schema (the same schema Swagger shows)
 * and hands it back typed by that schema (`Static<typeof schema>`), so a route names no body
 * type of its own. The check is TypeBox's compiled one (schema-check.ts: compiled once per
 * schema), plus what JSON Schema cannot say: Postgres text cannot hold NUL, nor jsonb a lone
 * UTF-16 surrogate, so such strings (and object keys) are refused here rather than fail in the
 * database.
 *
 * A body that fails is answered with one catalogue error naming the parameter, in our own words:
 * unknown → parameter_unknown, absent → parameter_missing, wrong type or bounds →
 * parameter_invalid, a body that is not an object → body_not_object. Of all the problems TypeBox
 * finds, the first in a stable order is the one told: at each level, what is wrong with the
 * object itself, then its keys in the body's order (a key that is not text, an unknown key, a
 * record's entry), then missing fields in the schema's order, then each field in schema order.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { ValueErrorType, type ValueError } from "@sinclair/typebox/errors";
import { ApiError } from "../errors.ts";
import { compiledCheck } from "../schema-check.ts";

export function validateBody<S extends TSchema>(schema: S, value: unknown): Static<S> {
  const check = compiledCheck(schema);
  if (check.Check(value) && textProblems(schema, value, []).next().done) return value;
  const problems = [...[...check.Errors(value)].map((e) => fromTypeBox(schema, e)), ...textProblems(schema, value, [])];
  const ranked = problems.map((p) => ({ p, rank: rankOf(schema, value, p) })).sort((a, b) => compareRanks(a.rank, b.rank));
  const first = ranked[0]?.p ?? { code: "parameter_invalid", at: [], param: undefined, message: "body has an invalid value.", kind: "value" };
  throw first.code === "body_not_object" ? new ApiError("body_not_object") : new ApiError(first.code, first.message, first.param);
}

/** The schema keywords read here: TypeBox's own, as Elysia's `t` builds them. */
interface Shape {
  type?: string;
  properties?: Record<string, Shape>;
  required?: string[];
  patternProperties?: Record<string, Shape>;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxProperties?: number;
  anyOf?: Shape[];
  const?: unknown;
}

type Kind = "type" | "entries" | "nul" | "surrogate" | "minLength" | "maxLength" | "pattern" | "minimum" | "maximum" | "value" | "badKey" | "unknown" | "missing";

interface Problem {
  code: "parameter_invalid" | "parameter_missing" | "parameter_unknown" | "body_not_object";
  /** Where, as keys from the body down: what the order is worked out from. */
  at: string[];
  /** The parameter the error names (absent for the body itself). */
  param: string | undefined;
  message: string;
  kind: Kind;
}

/** Order of the problems of one value: its type first, then each bound as a schema lists them. */
const AT_VALUE: Partial<Record<Kind, number>> = { type: 0, entries: 1, nul: 1, surrogate: 2, minLength: 3, minimum: 3, maxLength: 4, maximum: 4, pattern: 5, value: 6 };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const isText = (s: string) => !s.includes("\u0000") && !LONE_SURROGATE.test(s);

const nameOf = (at: string[]) => at.join(".") || "body";

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return `a ${typeof v}`;
}

/** A TypeBox error path (a JSON pointer: "/metadata/a~1b") as keys. */
function keysOf(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function fromTypeBox(root: TSchema, e: ValueError): Problem {
  const at = keysOf(e.path);
  const param = at.join(".") || undefined;
  const name = nameOf(at);
  const s = e.schema as Shape;
  const invalid = (kind: Kind, message: string): Problem => ({ code: "parameter_invalid", at, param, message: `${name} ${message}`, kind });
  if (e.type === ValueErrorType.ObjectAdditionalProperties) return { code: "parameter_unknown", at, param, message: `${at.join(".")} is not a parameter of this endpoint.`, kind: "unknown" };
  // A field that is there but undefined (a form's input, never JSON) is missing too.
  if (e.type === ValueErrorType.ObjectRequiredProperty || (e.value === undefined && isField(root, at)))
    return { code: "parameter_missing", at, param, message: `${at.join(".")} is required.`, kind: "missing" };
  switch (e.type) {
    case ValueErrorType.Object:
      if (at.length === 0) return { code: "body_not_object", at, param: undefined, message: "", kind: "type" };
      return invalid("type", `must be an object, not ${describe(e.value)}.`);
    case ValueErrorType.ObjectMaxProperties:
      return invalid("entries", `may have at most ${s.maxProperties} entries.`);
    case ValueErrorType.String:
      return invalid("type", `must be a string, not ${describe(e.value)}.`);
    case ValueErrorType.StringMinLength:
      return invalid("minLength", `must be at least ${s.minLength} characters.`);
    case ValueErrorType.StringMaxLength:
      return invalid("maxLength", `must be at most ${s.maxLength} characters.`);
    case ValueErrorType.StringPattern:
      return invalid("pattern", "has an invalid format.");
    case ValueErrorType.Integer:
      return invalid("type", `must be a whole number, not ${describe(e.value)}.`);
    case ValueErrorType.Number:
      return invalid("type", `must be a number, not ${describe(e.value)}.`);
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return invalid("minimum", `must be at least ${s.minimum}.`);
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return invalid("maximum", `must be at most ${s.maximum}.`);
    case ValueErrorType.Boolean:
      return invalid("type", `must be true or false, not ${describe(e.value)}.`);
    case ValueErrorType.Literal:
      return invalid("type", `must be ${JSON.stringify(s.const)}.`);
    case ValueErrorType.Union: {
      const consts = (s.anyOf ?? []).filter((o) => "const" in o).map((o) => JSON.stringify(o.const));
      return invalid("type", consts.length ? `must be one of ${consts.join(", ")}.` : "has an invalid value.");
    }
    default:
      // A keyword no request schema of ours uses (a format, a multiple of): said plainly.
      return invalid("value", "has an invalid value.");
  }
}

/** Whether `at` names a field of an object schema (not the body, nor a record's entry). */
function isField(root: TSchema, at: string[]): boolean {
  let s: Shape | undefined = root as Shape;
  for (const key of at.slice(0, -1)) s = s && (Object.hasOwn(s.properties ?? {}, key) ? s.properties![key] : entryShape(s, key));
  return at.length > 0 && !!s && Object.hasOwn(s.properties ?? {}, at.at(-1)!);
}

/** The entry schema of a record (`patternProperties`) whose pattern `key` matches. */
function entryShape(s: Shape, key: string): Shape | undefined {
  for (const [pattern, sub] of Object.entries(s.patternProperties ?? {})) if (new RegExp(pattern).test(key)) return sub;
  return undefined;
}

/** NUL and lone surrogates in the strings and keys the schema reaches (strings where it says string). */
function* textProblems(schema: TSchema, value: unknown, at: string[]): Generator<Problem> {
  const s = schema as Shape;
  const name = nameOf(at);
  const param = at.join(".") || undefined;
  if (typeof value === "string") {
    if (s.type !== "string") return;
    if (value.includes("\u0000")) yield { code: "parameter_invalid", at, param, message: `${name} must not contain NUL characters.`, kind: "nul" };
    if (LONE_SURROGATE.test(value)) yield { code: "parameter_invalid", at, param, message: `${name} must be valid Unicode text.`, kind: "surrogate" };
    return;
  }
  if (s.type !== "object" || typeof value !== "object" || value === null || Array.isArray(value)) return;
  const props = s.properties ?? {};
  for (const [key, v] of Object.entries(value)) {
    if (!isText(key)) yield { code: "parameter_invalid", at: [...at, key], param, message: `${name} has a key that is not valid text.`, kind: "badKey" };
    const sub = Object.hasOwn(props, key) ? props[key] : entryShape(s, key);
    if (sub && v !== undefined) yield* textProblems(sub as TSchema, v, [...at, key]);
  }
}

/**
 * Where a problem comes in the order told above, as numbers compared left to right: per level,
 * 0 for the value itself, 1 for its keys (then the key's place in the body), 2 for a missing
 * field (its place in `required`), 3 for a field (its place in the schema).
 */
function rankOf(schema: TSchema, body: unknown, p: Problem): number[] {
  const rank: number[] = [];
  let s = schema as Shape;
  let v = body as Record<string, unknown>;
  for (let i = 0; i < p.at.length; i++) {
    const key = p.at[i]!;
    const last = i === p.at.length - 1;
    const props = s.properties ?? {};
    if (Object.hasOwn(props, key)) {
      if (last && p.kind === "missing") return [...rank, 2, (s.required ?? []).indexOf(key)];
      rank.push(3, Object.keys(props).indexOf(key));
      s = props[key]!;
    } else {
      rank.push(1, Object.keys(v).indexOf(key));
      if (last && p.kind === "badKey") return [...rank, 0];
      rank.push(1);
      if (last && p.kind === "unknown") return rank;
      s = entryShape(s, key) ?? {};
    }
    v = v[key] as Record<string, unknown>;
  }
  return [...rank, 0, AT_VALUE[p.kind] ?? 0];
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** An address parameter's check lives with the sessions, where the API's routes and the dashboard's actions both reach it. */
export { addressParam } from "../sessions/address-param.ts";
