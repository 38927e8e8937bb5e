/**
 * Where rows read with hand-written SQL become typed values: the one decoding module.
 *
 * Every raw statement that reads rows names the shape of its row here-style, next to the SQL:
 *
 *   const SessionRow = rowShape("session status", { id: col.text, status: col.oneOf(SESSION_STATUSES) });
 *   const [row] = decodeRows(SessionRow, await sql`select id, status from app.payment_sessions …`);
 *
 * and `decodeRows` checks every row against it (compiled once per shape), turning text dates and
 * json into values on the way. A column renamed, dropped or changed in type then fails loudly at
 * the statement that reads it — `RowShapeMismatch`, naming the statement, the column and what
 * came back — instead of travelling on as `undefined` under a cast. Statements written with
 * drizzle's query builder are typed by the schema already and need no shape.
 *
 * Why decoding is needed at all: the shared client (db/client.ts) hands raw statements dates and
 * json as text, since drizzle takes over postgres.js's parsers on the client it wraps; `bigint`
 * columns come back as JS bigints, `integer` as numbers, `numeric` as text.
 *
 * Casts (`as`) on rows exist only in this file.
 */
import { Type, type Static, type StaticDecode, type TObject, type TProperties, type TSchema } from "@sinclair/typebox";
import type { TypeCheck } from "@sinclair/typebox/compiler";
import { TransformDecodeError } from "@sinclair/typebox/value";
import { compiledCheck } from "../schema-check.ts";
import { BaseError } from "../../../shared/base-error.ts";
import { messageOf } from "../../../shared/describe-error.ts";

/** The text of a time as Postgres sends it to a raw statement, or a Date; decoded to a Date. */
const time = Type.Transform(Type.Union([Type.String(), Type.Date()]))
  .Decode((v) => {
    const d = v instanceof Date ? v : new Date(v);
    if (Number.isNaN(d.getTime())) throw new TypeError(`not a time: ${String(v)}`);
    return d;
  })
  .Encode((d) => d);

const hex = Type.Unsafe<`0x${string}`>(Type.String({ pattern: "^0x[0-9a-fA-F]*$" }));

// Anything but SQL null, so that col.nullable(col.json(…)) sends a null to its Null branch.
const json = <S extends TSchema>(schema: S) =>
  Type.Transform(Type.Not(Type.Null()))
    .Decode((v): Static<S> => {
      const value: unknown = typeof v === "string" ? JSON.parse(v) : v;
      const check = compiledCheck(schema);
      if (!check.Check(value)) throw new TypeError(`json column: ${describeFirstError(check, value)}`);
      return value as Static<S>;
    })
    .Encode((v) => v);

/**
 * An integer column read exactly, whichever way it arrives: a bigint (int8 on the shared client),
 * its decimal text (numeric), or a JSON number (int8 inside json_agg) — refused when past 2^53,
 * where a JSON number may already have lost digits.
 */
const wholeNumber = Type.Transform(Type.Union([Type.BigInt(), Type.String({ pattern: "^-?[0-9]+$" }), Type.Integer()]))
  .Decode((v) => {
    if (typeof v === "number" && !Number.isSafeInteger(v)) throw new TypeError(`integer past 2^53 read from json: ${v}`);
    return BigInt(v);
  })
  .Encode((v) => v);

/** Column types as they come back from Postgres to a raw statement on the shared client. */
export const col = {
  text: Type.String(),
  /** int2/int4 (and counts cast to int). */
  int: Type.Number(),
  /** float8: durations and lags computed in SQL (never money: that is bigint or numeric). */
  float: Type.Number(),
  /** int8: a JS bigint, never a lossy number. */
  bigint: Type.BigInt(),
  /** int8 or numeric as a bigint, from a bigint, decimal text or a safe JSON integer. */
  wholeNumber,
  /** numeric: its exact decimal text. */
  numeric: Type.String(),
  bool: Type.Boolean(),
  /** timestamptz: a Date, whether the client sent text or a Date. */
  time,
  /** timestamptz kept as the text Postgres sent, for statements that only pass it on. */
  timeText: Type.String(),
  /** Text holding 0x-prefixed hex (a hash, an address, signed bytes): viem's `0x${string}`. */
  hex,
  /** jsonb/json: parsed, then checked against `schema` (anything, by default). */
  json: <S extends TSchema = ReturnType<typeof Type.Unknown>>(schema?: S) => json(schema ?? (Type.Unknown() as TSchema as S)),
  /** A text column holding one of `values` (a status, a state, an environment). */
  oneOf: <const V extends readonly string[]>(values: V) => Type.Union(values.map((v) => Type.Literal(v))) as unknown as TSchema & { static: V[number] },
  nullable: <S extends TSchema>(schema: S) => Type.Union([schema, Type.Null()]),
  /**
   * A column that is null in every row of this shape: for a statement whose rows come in two
   * kinds told apart by one column (a shape per kind), so the decoded union narrows on it.
   */
  null: Type.Null(),
} as const;

export interface RowShape<R> {
  readonly name: string;
  readonly check: TypeCheck<TSchema>;
  /** Phantom: the decoded row's type. */
  readonly _row?: R;
}

/** Static type of a shape's decoded row. */
export type RowOf<S> = S extends RowShape<infer R> ? R : never;

/**
 * A row's shape: the columns a statement reads (others it returns are allowed and dropped from
 * the type). `name` says which statement, for the error.
 */
export function rowShape<P extends TProperties>(name: string, columns: P): RowShape<StaticDecode<TObject<P>>> {
  return { name, check: compiledCheck(Type.Object(columns)) };
}

export class RowShapeMismatch extends BaseError {
  override name = "RowShapeMismatch";
  /** `cause`: the decoder's own error, when a column would not decode. */
  constructor(shape: string, detail: string, opts: { cause?: unknown } = {}) {
    super(`row of "${shape}" does not have its documented shape: ${detail}`, opts);
  }
}

/** Checks and decodes every row of a result (postgres.js's RowList, or drizzle's `execute`). */
export function decodeRows<R>(shape: RowShape<R>, rows: Iterable<unknown>): R[] {
  const out: R[] = [];
  for (const row of rows) out.push(decodeRow(shape, row));
  return out;
}

/** The one row of a result, or undefined when there is none. */
export function decodeFirst<R>(shape: RowShape<R>, rows: ArrayLike<unknown>): R | undefined {
  return rows.length > 0 ? decodeRow(shape, rows[0]) : undefined;
}

export function decodeRow<R>(shape: RowShape<R>, row: unknown): R {
  // Decode checks the row first (and then decodes only where the shape has a time or json column);
  // the errors are worked out only for a row that does not check.
  try {
    return shape.check.Decode(row) as R;
  } catch (e) {
    if (!shape.check.Check(row)) throw new RowShapeMismatch(shape.name, describeFirstError(shape.check, row));
    // A time or json column that would not decode: its path names the column.
    const at = e instanceof TransformDecodeError ? `${e.path}: ` : "";
    throw new RowShapeMismatch(shape.name, at + messageOf(e), { cause: e });
  }
}

function describeFirstError(check: TypeCheck<TSchema>, value: unknown): string {
  const first = check.Errors(value).First();
  if (!first) return "unknown mismatch";
  const got = first.value === undefined ? "nothing" : JSON.stringify(first.value, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));
  return `${first.path || "(row)"}: ${first.message}, got ${got}`;
}
