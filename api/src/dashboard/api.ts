/**
 * The dashboard acts through the API's own routes: a button that pays a sandbox session or
 * adds a webhook endpoint sends the very request a merchant's server would, in-process, with
 * the signed-in user's merchant and environment standing in for an API key
 * (http/auth.ts `delegatedAuth`). One implementation of every rule; the dashboard is a face.
 */
import { delegatedAuth, type ApiKeyAuth } from "../http/auth.ts";
import type { Services } from "../http/services.ts";
import { listSettlements } from "../sessions/settlements.ts";
import type { Environment } from "../../../shared/environment.ts";
import type { Login } from "./logins.ts";
import type { Actor } from "../credentials/security-history.ts";

export type Dispatch = (request: Request) => Promise<Response>;

export interface ApiResult {
  status: number;
  body: any;
  /** The error's message when the route refused (4xx/5xx), for the page to show. */
  error?: { code: string; message: string; param?: string };
}

export async function callApi(
  services: Services,
  dispatch: Dispatch,
  login: Login,
  environment: Environment,
  method: string,
  path: string,
  body?: unknown,
  person?: Actor,
): Promise<ApiResult> {
  const request = new Request(`http://dashboard.internal${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const settlements = new Map((await listSettlements(services.database.db, login.merchant.id, environment)).map((s) => [s.chainId, s.address]));
  const auth: ApiKeyAuth = {
    environment,
    merchant: login.merchant,
    // Not a key: the user. Its id names the rate-limit bucket (per user, like a key's).
    key: { id: `dashboard:${login.user.id}`, merchantId: login.merchant.id, environment, name: login.user.email, prefix: "dashboard", createdAt: login.createdAt, lastUsedAt: null, revokedAt: null },
    settlements,
    ...(person ? { person } : {}),
  };
  delegatedAuth.set(request, auth);
  const res = await dispatch(request);
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: leave as text
  }
  const error = res.status >= 400 ? (parsed?.error ?? { code: "internal_error", message: "Something went wrong." }) : undefined;
  return { status: res.status, body: parsed, ...(error ? { error } : {}) };
}
