/**
 * TEST helper: does an answer match what the OpenAPI document (GET /docs/json) says? The
 * operation a concrete path belongs to, and the check of an answer against the schema documented
 * for its route and status, by an independent JSON Schema validator (Ajv, draft 2020-12, the
 * dialect of OpenAPI 3.1). An answer with a status the document does not list is a problem too.
 */
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { ValidateFunction } from "ajv";

/** The document, read loosely: it is JSON of a known shape. */
type OpenApi = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, unknown> } };

export interface DocumentedAnswers {
  /**
   * "GET /events/{id}" for a concrete method and path (query ignored; the server ignores one
   * trailing slash), or undefined.
   */
  operationOf(method: string, path: string): string | undefined;
  /** Why this answer does not match the document, or undefined when it does. */
  problem(op: string, status: number, body: unknown): string | undefined;
  /**
   * The same for a method and path the document does not have (an id left empty, or holding an
   * unescaped `/` or `?`, makes another path): the only answers are 404 `route_not_found` and
   * 405 `method_not_allowed`, in the one error shape.
   */
  undocumentedProblem(method: string, path: string, status: number, body: unknown): string | undefined;
}

export function documentedAnswers(doc: OpenApi): DocumentedAnswers {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat("integer", true); // Elysia marks numeric path/query parameters so; not a JSON type check
  const compiled = new Map<string, ValidateFunction>();
  let validateError: ValidateFunction | undefined;
  const matchers = Object.keys(doc.paths).map((p) => ({ p, re: new RegExp(`^${p.replace(/\{[^}]+\}/g, "[^/]+")}$`) }));

  return {
    operationOf(method, path) {
      const bare = path.split("?")[0]!.replace(/(.)\/$/, "$1");
      const m = matchers.find(({ p, re }) => re.test(bare) && doc.paths[p]![method.toLowerCase()]);
      return m ? `${method} ${m.p}` : undefined;
    },
    problem(op, status, body) {
      const [method, path] = op.split(" ") as [string, string];
      const response = doc.paths[path]?.[method.toLowerCase()]?.responses?.[String(status)];
      if (!response) return `${op} answered ${status}, which the document does not list`;
      const schema = response.content?.["application/json"]?.schema;
      if (!schema) return undefined;
      const key = `${op} ${status}`;
      let validate = compiled.get(key);
      if (!validate) {
        const root = JSON.parse(JSON.stringify({ ...schema, $defs: doc.components.schemas }).replaceAll('"#/components/schemas/', '"#/$defs/'));
        validate = ajv.compile(root);
        compiled.set(key, validate);
      }
      return validate(body) ? undefined : `${op} ${status}: ${ajv.errorsText(validate.errors)} — ${JSON.stringify(body).slice(0, 300)}`;
    },
    undocumentedProblem(method, path, status, body) {
      const code = (body as { error?: { code?: string } } | undefined)?.error?.code;
      const expected = status === 404 ? "route_not_found" : status === 405 ? "method_not_allowed" : undefined;
      if (!expected || code !== expected) return `${method} ${path} (not in the document) answered ${status} ${code}`;
      validateError ??= ajv.compile({ $ref: "#/$defs/Error", $defs: doc.components.schemas });
      return validateError(body) ? undefined : `${method} ${path} ${status}: ${ajv.errorsText(validateError.errors)}`;
    },
  };
}
