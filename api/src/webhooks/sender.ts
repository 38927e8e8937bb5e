/**
 * One HTTP attempt at a webhook: POST JSON, a hard timeout, no redirects followed, any
 * 2xx is success, the first 1 KB of the answer kept for the log. The URL is checked and
 * resolved again right before connecting (target.ts), and the connection goes to the
 * address that passed the check: the request is sent to that IP with the original
 * `Host` header, and for https with SNI and certificate verification against the
 * original host name (`tls.serverName`), so a DNS answer that changed since (rebinding)
 * is never used.
 *
 * What a non-public address answers (a loopback or private target, allowed in sandbox by
 * SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS) is never kept: no body excerpt, no Location, only
 * the status code. Otherwise a sandbox key could read the operator's internal services
 * through the test endpoint and the attempt log.
 */
import type { Environment } from "../../../shared/environment.ts";
import { classifyAddress } from "./address.ts";
import { checkUrl, resolveTarget, TargetError, type Resolver } from "./target.ts";
import { findInChain } from "../../../shared/error-chain.ts";
import { describeError } from "../../../shared/describe-error.ts";

export const RESPONSE_EXCERPT_BYTES = 1024;
export const USER_AGENT = "Paysession-Webhooks/1";

export interface SendOptions {
  timeoutMs: number;
  resolver?: Resolver;
  /** Sandbox targets may be loopback or private addresses (SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS). */
  allowPrivateTargets?: boolean;
  /** Extra TLS settings (tests: a private CA). */
  tls?: { ca?: string };
  /** Aborts the attempt (worker shutdown). */
  signal?: AbortSignal;
}

export interface SendResult {
  succeeded: boolean;
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string | null;
  error: string | null;
  /** The endpoint answered 410 Gone: it asks to be disabled. */
  gone: boolean;
  /** Aborted by `signal`: not an attempt the endpoint saw through. */
  aborted: boolean;
}

export async function sendWebhook(
  rawUrl: string,
  environment: Environment,
  headers: Record<string, string>,
  body: string,
  opts: SendOptions,
): Promise<SendResult> {
  const t0 = performance.now();
  const done = (r: Partial<SendResult>): SendResult => ({
    succeeded: false,
    statusCode: null,
    responseExcerpt: null,
    error: null,
    gone: false,
    aborted: false,
    ...r,
    latencyMs: Math.round(performance.now() - t0),
  });
  let pinned: URL;
  let hostHeader: string;
  let serverName: string | undefined;
  let echo: boolean;
  try {
    const target = checkUrl(rawUrl, environment);
    const addresses = await resolveTarget(target, environment, opts.resolver, Math.min(5000, opts.timeoutMs), opts.allowPrivateTargets ?? false);
    const ip = addresses[0]!;
    echo = answerMayBeKept(ip);
    pinned = new URL(target.url.toString());
    pinned.hostname = ip.includes(":") ? `[${ip}]` : ip;
    hostHeader = target.url.host;
    if (target.url.protocol === "https:" && !target.literal) serverName = target.host;
    else if (target.url.protocol === "https:" && target.host === "localhost") serverName = "localhost";
  } catch (e) {
    const refused = findInChain(e, (x) => x instanceof TargetError);
    return done({ error: refused ? `refused: ${refused.message}` : `refused: ${String(e)}` });
  }
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  try {
    const res = await fetch(pinned, {
      method: "POST",
      headers: { ...headers, host: hostHeader, "content-type": "application/json", "user-agent": USER_AGENT },
      body,
      redirect: "manual",
      signal,
      ...(pinned.protocol === "https:" ? { tls: { ...(serverName ? { serverName } : {}), ...(opts.tls ?? {}) } } : {}),
    });
    let excerpt: string | null = null;
    if (echo) excerpt = await readExcerpt(res);
    else res.body?.cancel().catch(() => {});
    const statusCode = res.status;
    if (statusCode >= 200 && statusCode < 300) return done({ succeeded: true, statusCode, responseExcerpt: excerpt });
    if (statusCode >= 300 && statusCode < 400) {
      const where = echo ? res.headers.get("location") : null;
      return done({ statusCode, responseExcerpt: excerpt, error: `redirect not followed${where ? ` (Location: ${where.slice(0, 200)})` : ""}` });
    }
    return done({ statusCode, responseExcerpt: excerpt, gone: statusCode === 410, error: `HTTP ${statusCode}` });
  } catch (e) {
    if (opts.signal?.aborted) return done({ aborted: true, error: "aborted: worker stopping" });
    if (timeout.aborted) return done({ error: `timeout: no answer within ${opts.timeoutMs} ms` });
    return done({ error: describeFetchError(e) });
  }
}

/** Only a public address's answer may be shown to the merchant (attempt log, test endpoint). */
export function answerMayBeKept(ip: string): boolean {
  return classifyAddress(ip) === "public";
}

/** The first RESPONSE_EXCERPT_BYTES of the body as text; the rest is not read. */
export async function readExcerpt(res: Response): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut short still leaves what came.
  } finally {
    reader.cancel().catch(() => {});
  }
  if (size === 0) return "";
  const all = new Uint8Array(size);
  let o = 0;
  for (const c of chunks) {
    all.set(c, o);
    o += c.byteLength;
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(all.subarray(0, RESPONSE_EXCERPT_BYTES)).replace(/\u0000/g, "");
}

/** As attempts have always stored it (the attempt log shows it): the outermost code and message. */
function describeFetchError(e: unknown): string {
  const outer = typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined;
  const code = outer ? `${String(outer)}: ` : "";
  return `connection failed: ${code}${describeError(e, { links: 1, maxLength: 300, redact: false })}`;
}
