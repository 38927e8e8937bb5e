/**
 * One compiled TypeBox check per schema object, shared by the two places that check values
 * against TypeBox schemas: the row decoder (db/rows.ts) and the request-body validator
 * (http/validate.ts). A schema is compiled on its first use and the compiled check kept for the
 * schema's life (a WeakMap keyed by the schema object), so a hot path pays for compiling once.
 */
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";

const compiledChecks = new WeakMap<TSchema, TypeCheck<TSchema>>();

export function compiledCheck<S extends TSchema>(schema: S): TypeCheck<S> {
  let check = compiledChecks.get(schema);
  if (!check) compiledChecks.set(schema, (check = TypeCompiler.Compile(schema)));
  return check as TypeCheck<S>;
}
