/**
 * The server client against the real service: defaults from the environment, every resource,
 * auto-pagination, typed errors, retries (a lost create answer makes one session, not two; 429
 * waits), and webhook verification of a real delivery, including during a secret rotation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../testing/service.ts";
import { createApiKey } from "../../api/src/credentials/store.ts";
import { Paysession, PaysessionError, verifyWebhook, WebhookVerificationError } from "./index.ts";

let svc: TestService;
let key: string;
let client: Paysession;
const received: { body: string; headers: Headers; path: string }[] = [];
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  svc = await startTestService();
  key = (await svc.merchant("Client")).sandboxKey;
  client = new Paysession({ apiKey: key, host: svc.url, retryBaseMs: 10 });
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      received.push({ body: await req.text(), headers: req.headers, path: new URL(req.url).pathname });
      return new Response("ok");
    },
  });
});
afterAll(async () => {
  receiver?.stop(true);
  await svc.close();
});

describe("configuration", () => {
  test("SERVICE_API_KEY and SERVICE_API_HOST are the defaults; without them, a clear error", async () => {
    const saved = { k: process.env.SERVICE_API_KEY, h: process.env.SERVICE_API_HOST };
    try {
      process.env.SERVICE_API_KEY = key;
      process.env.SERVICE_API_HOST = svc.url;
      const s = await new Paysession().paymentSessions.create({ amount: "1.00", currency: "USD" });
      expect(s.status).toBe("PENDING");
      delete process.env.SERVICE_API_KEY;
      expect(() => new Paysession()).toThrow(PaysessionError);
      expect(() => new Paysession({ apiKey: "pst_test_x", host: svc.url })).toThrow(/secret key/);
    } finally {
      process.env.SERVICE_API_KEY = saved.k;
      process.env.SERVICE_API_HOST = saved.h;
      if (saved.k === undefined) delete process.env.SERVICE_API_KEY;
      if (saved.h === undefined) delete process.env.SERVICE_API_HOST;
    }
  });
});

describe("payment sessions", () => {
  test("create, retrieve, cancel; list pages by themselves, newest first, each session once", async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await client.paymentSessions.create({ amount: `2.0${i}`, currency: "USD", referenceId: `order-${i}` })).paymentSessionId);
    const got = await client.paymentSessions.retrieve(made[0]!);
    expect(got).toMatchObject({ paymentSessionId: made[0], amount: "2.00", referenceId: "order-0", status: "PENDING" });
    const firstPage = await client.paymentSessions.list({ limit: 2 });
    expect(firstPage.data.length).toBe(2);
    expect(firstPage.hasMore).toBe(true);
    const all: string[] = [];
    for await (const s of client.paymentSessions.list({ limit: 2 })) all.push(s.paymentSessionId);
    expect(new Set(all).size).toBe(all.length);
    expect(all.slice(0, 5)).toEqual([...made].reverse());
    const canceled = await client.paymentSessions.cancel(made[1]!);
    expect(canceled.status).toBe("CANCELED");
  });

  test("an API error is a PaysessionError with type, code, param, status and requestId", async () => {
    const err = await client.paymentSessions.create({ amount: "3", currency: "USD" }).catch((e) => e);
    expect(err).toBeInstanceOf(PaysessionError);
    expect(err).toMatchObject({ type: "invalid_request_error", code: "amount_invalid", param: "amount", status: 400 });
    expect(err.requestId).toMatch(/^req_/);
    const missing = await client.paymentSessions.retrieve("ps_000000000000000000000000").catch((e) => e);
    expect(missing).toMatchObject({ code: "resource_not_found", status: 404 });
    const offline = await new Paysession({ apiKey: key, host: "http://127.0.0.1:9", maxRetries: 1, retryBaseMs: 1 }).paymentSessions.retrieve("ps_x").catch((e) => e);
    expect(offline).toMatchObject({ type: "connection_error", code: "connection_failed" });
  });

  test("a restricted key outside its scopes is a PaysessionError api_key_scope_missing (403) naming the scope, not retried", async () => {
    const m = await svc.merchant("Client scopes");
    const { secret } = await createApiKey(svc.services.database.db, m.merchant.id, "sandbox", "read only", undefined, { scopes: ["sessions:read"] });
    const reader = new Paysession({ apiKey: secret, host: svc.url, retryBaseMs: 10 });
    const before = await svc.count("payment_sessions");
    const err: PaysessionError = await reader.paymentSessions.create({ amount: "1.00", currency: "USD" }).catch((e) => e);
    expect(err).toBeInstanceOf(PaysessionError);
    expect(err).toMatchObject({ type: "permission_error", code: "api_key_scope_missing", status: 403 });
    expect(err.message).toContain("sessions:write");
    expect(await svc.count("payment_sessions")).toBe(before);
    // What it may do, it does.
    expect((await reader.paymentSessions.list({ limit: 1 })).data).toEqual([]);
  });
});

describe("retries", () => {
  /** A proxy in front of the service that misbehaves as told, counting what passes through. */
  function proxy(misbehave: (n: number, req: Request, upstream: () => Promise<Response>) => Promise<Response>) {
    let n = 0;
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) => {
        const url = new URL(req.url);
        const upstream = async () =>
          fetch(svc.url + url.pathname + url.search, { method: req.method, headers: req.headers, body: req.method === "GET" ? undefined : await req.text() });
        return misbehave(++n, req, upstream);
      },
    });
    return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true), count: () => n };
  }

  test("a create whose answer is lost is sent again with the same Idempotency-Key: one session", async () => {
    const keys: string[] = [];
    const p = proxy(async (n, req, upstream) => {
      keys.push(req.headers.get("idempotency-key") ?? "");
      const res = await upstream(); // the service creates the session…
      if (n === 1) return new Response("bad gateway", { status: 502 }); // …and the answer is lost
      return res;
    });
    try {
      const before = (await client.paymentSessions.list({ limit: 100 })).data.length;
      const s = await new Paysession({ apiKey: key, host: p.url, retryBaseMs: 5 }).paymentSessions.create({ amount: "7.77", currency: "USD" });
      expect(p.count()).toBe(2);
      expect(keys[0]).toBeTruthy();
      expect(keys[1]).toBe(keys[0]!);
      const after = (await client.paymentSessions.list({ limit: 100 })).data;
      expect(after.length).toBe(before + 1);
      expect(after[0]!.paymentSessionId).toBe(s.paymentSessionId);
    } finally {
      p.stop();
    }
  });

  test("refunds: a create whose answer is lost makes one refund; retrieve, list (one session's and all, every page), cancel, balances", async () => {
    const s = await client.paymentSessions.create({ amount: "5.00", currency: "USD" });
    // The payment as the session's ledger records it once confirmed.
    await svc.services.database.sql`
      insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
      values (${s.paymentSessionId}, ${s.networks[0]!.chainId}, 'in', ${`0x${"cd".repeat(32)}`}, 0, 5000000, now())`;
    const p = proxy(async (n, _req, upstream) => {
      const res = await upstream();
      return n === 1 ? new Response("bad gateway", { status: 502 }) : res;
    });
    let first: string;
    try {
      const r = await new Paysession({ apiKey: key, host: p.url, retryBaseMs: 5 }).refunds.create(s.paymentSessionId, { amount: "1.00", reason: "requested_by_customer" });
      expect(p.count()).toBe(2);
      expect(r).toMatchObject({ paymentSessionId: s.paymentSessionId, status: "PENDING", amount: "1.00" });
      first = r.refundId;
    } finally {
      p.stop();
    }
    for (const amount of ["0.10", "0.20"]) await client.refunds.create(s.paymentSessionId, { amount, reason: "other" });
    const mine: string[] = [];
    for await (const r of client.refunds.list({ paymentSessionId: s.paymentSessionId, limit: 1 })) mine.push(r.amount);
    expect(mine).toEqual(["0.20", "0.10", "1.00"]); // one refund of 1.00 although its create was sent twice
    expect((await client.refunds.list({ limit: 1 })).data).toHaveLength(1);
    expect((await client.refunds.retrieve(first)).refundId).toBe(first);
    // Reads are retried as sessions' are: a 502 on the first try of a retrieve and of a list page.
    const flaky = proxy(async (n, _req, upstream) => (n % 2 === 1 ? new Response("bad gateway", { status: 502 }) : upstream()));
    try {
      const through = new Paysession({ apiKey: key, host: flaky.url, retryBaseMs: 5 });
      expect((await through.refunds.retrieve(first)).refundId).toBe(first);
      const walked: string[] = [];
      for await (const r of through.refunds.list({ paymentSessionId: s.paymentSessionId, limit: 2 })) walked.push(r.amount);
      expect(walked).toEqual(["0.20", "0.10", "1.00"]);
      expect(flaky.count()).toBe(6); // three requests (a retrieve, two pages), each refused once
    } finally {
      flaky.stop();
    }
    expect((await client.refunds.cancel(first)).status).toBe("CANCELED");
    expect((await client.paymentSessions.retrieve(s.paymentSessionId)).amountRefunded).toBe("0.30");
    const err = await client.refunds.create(s.paymentSessionId, { amount: "9.00", reason: "other" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaysessionError);
    expect((err as PaysessionError).code).toBe("refund_exceeds_refundable");
    const balances = await client.refunds.balances();
    expect(balances[0]!.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
  });

  test("payment links: a create whose answer is lost makes one link; retrieve, list every page, deactivate; bad input is a typed error", async () => {
    const p = proxy(async (n, _req, upstream) => {
      const res = await upstream();
      return n === 1 ? new Response("bad gateway", { status: 502 }) : res;
    });
    let link;
    try {
      link = await new Paysession({ apiKey: key, host: p.url, retryBaseMs: 5 }).paymentLinks.create({ amount: "25.00", description: "Client link", maxUses: 1 });
      expect(p.count()).toBe(2);
    } finally {
      p.stop();
    }
    expect(link).toMatchObject({ amount: "25.00", description: "Client link", status: "active", uses: 0 });
    await client.paymentLinks.create({ minAmount: "1.00", maxAmount: "9.00", description: "Second" });
    const seen: string[] = [];
    for await (const l of client.paymentLinks.list({ limit: 1 })) seen.push(l.description);
    expect(seen).toEqual(["Second", "Client link"]); // one "Client link" although its create was sent twice
    expect((await client.paymentLinks.retrieve(link.paymentLinkId)).url).toBe(link.url);
    expect((await client.paymentSessions.list({ paymentLinkId: link.paymentLinkId })).data).toEqual([]);
    expect((await client.paymentLinks.deactivate(link.paymentLinkId)).status).toBe("inactive");
    const bad = await client.paymentLinks.create({ amount: "25.00", description: "x", redirectUrl: "ftp://nope" }).catch((e) => e);
    expect(bad).toBeInstanceOf(PaysessionError);
    expect(bad).toMatchObject({ status: 400, code: "redirect_url_invalid", param: "redirectUrl" });
  });

  test("refunds to a link: create with destination link and requireApproval, the payer claims at claimUrl, approve sends it", async () => {
    const s = await client.paymentSessions.create({ amount: "5.00", currency: "USD" });
    await svc.services.database.sql`
      insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
      values (${s.paymentSessionId}, ${s.networks[0]!.chainId}, 'in', ${`0x${"ce".repeat(32)}`}, 0, 5000000, now())`;
    const r = await client.refunds.create(s.paymentSessionId, { amount: "2.00", reason: "requested_by_customer", destination: "link", requireApproval: true, linkExpiresInSeconds: 3600 });
    expect(r).toMatchObject({ status: "PENDING", waitingReason: "awaiting_claim", requireApproval: true, claimedAt: null });
    expect(r.claimUrl).toMatch(/\/refund\/rl_[0-9A-Za-z]{40}$/);
    const early = await client.refunds.approve(r.refundId).catch((e: unknown) => e);
    expect((early as PaysessionError).code).toBe("refund_not_approvable");
    const claimed = await fetch(`${svc.url}${new URL(r.claimUrl!).pathname}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "address=0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    });
    expect(claimed.status).toBe(303);
    expect((await client.refunds.retrieve(r.refundId)).waitingReason).toBe("awaiting_approval");
    const approved = await client.refunds.approve(r.refundId);
    expect(approved).toMatchObject({ status: "PENDING", waitingReason: null, parts: [{ destination: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" }] });
  });

  test("refund settings: retrieve (off by default), update (a field left out keeps its value; recorded), a bad delay is a typed error that changes nothing", async () => {
    const m = await svc.merchant("Settings");
    const own = new Paysession({ apiKey: m.sandboxKey, host: svc.url, retryBaseMs: 10 });
    expect(await own.refundSettings.retrieve()).toEqual({ automaticReturns: false, delaySeconds: 86400 });
    expect(await own.refundSettings.update({ automaticReturns: true })).toEqual({ automaticReturns: true, delaySeconds: 86400 });
    expect(await own.refundSettings.update({ delaySeconds: 3600 })).toEqual({ automaticReturns: true, delaySeconds: 3600 });
    const bad = await own.refundSettings.update({ delaySeconds: 0 }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(PaysessionError);
    expect(bad).toMatchObject({ status: 400, code: "parameter_invalid", param: "delaySeconds" });
    expect(await own.refundSettings.retrieve()).toEqual({ automaticReturns: true, delaySeconds: 3600 });
    const lines = await svc.services.database.sql`select detail from app.security_events where merchant_id = ${m.merchant.id} and action = 'refund_settings_changed' order by created_at`;
    expect(lines.map((l) => [l.detail.automaticReturns, l.detail.delaySeconds, l.detail.via])).toEqual([
      [true, 86400, "api"],
      [true, 3600, "api"],
    ]);
  });

  test("a session's automatic returns: list, keep (scheduled ones become kept, decided ones stay), another's session is resource_not_found", async () => {
    const s = await client.paymentSessions.create({ amount: "5.00", currency: "USD" });
    expect(await client.automaticReturns.list(s.paymentSessionId)).toEqual([]);
    // Two timers as the session step writes them: one waiting, one already decided.
    const chainId = s.networks[0]!.chainId;
    const merchantId = (await svc.services.database.sql`select merchant_id from app.payment_sessions where id = ${s.paymentSessionId}`)[0]!.merchant_id as string;
    await svc.services.database.sql`
      insert into app.auto_returns (id, session_id, merchant_id, environment, chain_id, reason, state, due_at, created_at, outcome, decided_at) values
        ('ar_sdk_waiting', ${s.paymentSessionId}, ${merchantId}, 'sandbox', ${chainId}, 'overpayment', 'scheduled', now() + interval '1 day', now() - interval '1 minute', null, null),
        ('ar_sdk_skipped', ${s.paymentSessionId}, ${merchantId}, 'sandbox', ${chainId}, 'late_payment', 'skipped', now(), now(), 'disabled', now())`;
    const listed = await client.automaticReturns.list(s.paymentSessionId);
    expect(listed.map((r) => [r.automaticReturnId, r.reason, r.status, r.outcome])).toEqual([
      ["ar_sdk_waiting", "overpayment", "scheduled", null],
      ["ar_sdk_skipped", "late_payment", "skipped", "disabled"],
    ]);
    expect(Date.parse(listed[0]!.dueAt)).toBeGreaterThan(Date.now());
    const kept = await client.automaticReturns.keep(s.paymentSessionId);
    expect(kept.map((r) => r.status)).toEqual(["kept", "skipped"]);
    expect(kept[0]!.decidedAt).not.toBeNull();
    expect((await client.automaticReturns.keep(s.paymentSessionId)).map((r) => r.status)).toEqual(["kept", "skipped"]);
    const other = new Paysession({ apiKey: (await svc.merchant("Other")).sandboxKey, host: svc.url, retryBaseMs: 10 });
    for (const call of [() => other.automaticReturns.list(s.paymentSessionId), () => other.automaticReturns.keep(s.paymentSessionId)]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 404, code: "resource_not_found" });
    }
  });

  test("429 waits for Retry-After; a POST without an Idempotency-Key is not repeated", async () => {
    const p = proxy(async (n, _req, upstream) => (n === 1 ? new Response("{}", { status: 429, headers: { "retry-after": "1" } }) : upstream()));
    try {
      const c = new Paysession({ apiKey: key, host: p.url, retryBaseMs: 5 });
      const t0 = Date.now();
      const list = await c.paymentSessions.list({ limit: 1 });
      expect(list.data.length).toBe(1);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    } finally {
      p.stop();
    }
    const q = proxy(async () => new Response(JSON.stringify({ error: { type: "api_error", code: "service_unavailable", message: "down", requestId: "req_x" } }), { status: 503 }));
    try {
      const s = await client.paymentSessions.create({ amount: "1.00", currency: "USD" });
      const err = await new Paysession({ apiKey: key, host: q.url, retryBaseMs: 5 }).paymentSessions.cancel(s.paymentSessionId).catch((e) => e);
      expect(err).toMatchObject({ code: "service_unavailable", status: 503, requestId: "req_x" });
      expect(q.count()).toBe(1);
    } finally {
      q.stop();
    }
  });
});

describe("webhooks, events, settlement", () => {
  test("a real delivery verifies with the endpoint's secret; altered, stale or foreign ones do not; both secrets during a rotation", async () => {
    const ep = await client.webhookEndpoints.create({ url: `http://127.0.0.1:${receiver.port}/hook`, description: "client test" });
    expect(ep.secret).toMatch(/^whsec_/);
    const result = await client.webhookEndpoints.sendTest(ep.id);
    expect(result.attempt.succeeded).toBe(true);
    const delivery = received.at(-1)!;
    const event = await verifyWebhook(delivery.body, delivery.headers, ep.secret);
    expect(event.type).toBe("webhook.test");
    await expect(verifyWebhook(delivery.body.replace("}", ' }'), delivery.headers, ep.secret)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verifyWebhook(delivery.body, delivery.headers, ep.secret, { nowSeconds: Math.floor(Date.now() / 1000) + 3600 })).rejects.toThrow(/too far/);
    const other = await client.webhookEndpoints.create({ url: `http://127.0.0.1:${receiver.port}/other` });
    await expect(verifyWebhook(delivery.body, delivery.headers, other.secret)).rejects.toThrow(/no signature/);
    // A plain object of headers (Node's IncomingMessage.headers) works too.
    const plain: Record<string, string> = {};
    delivery.headers.forEach((v, k) => (plain[k] = v));
    expect((await verifyWebhook(delivery.body, plain, ep.secret)).id).toBe(event.id);

    const rotated = await client.webhookEndpoints.rotateSecret(ep.id, { overlapSeconds: 600 });
    expect(rotated.secret).not.toBe(ep.secret);
    await client.webhookEndpoints.sendTest(ep.id);
    const during = received.at(-1)!;
    await verifyWebhook(during.body, during.headers, rotated.secret);
    await verifyWebhook(during.body, during.headers, ep.secret);
    expect((await client.webhookEndpoints.secret(ep.id)).secret).toBe(rotated.secret);

    const updated = await client.webhookEndpoints.update(ep.id, { description: "renamed" });
    expect(updated.description).toBe("renamed");
    expect((await client.webhookEndpoints.list()).map((e) => e.id)).toContain(ep.id);
    const attempts = [];
    for await (const a of client.webhookEndpoints.attempts(ep.id, { limit: 1 })) attempts.push(a);
    expect(attempts.length).toBe(2);
    expect(await client.webhookEndpoints.del(other.id)).toEqual({ id: other.id, deleted: true });
  });

  test("events: list by session, retrieve with deliveries, attempts, redeliver", async () => {
    const s = await client.paymentSessions.create({ amount: "4.00", currency: "USD" });
    const page = await client.events.list({ paymentSessionId: s.paymentSessionId });
    expect(page.data.map((e) => e.type)).toEqual(["payment_session.pending"]);
    const evt = await client.events.retrieve(page.data[0]!.id);
    if (evt.type === "settlement_address.updated" || evt.type.startsWith("refund.")) throw new Error("expected a session event");
    expect(evt.data.paymentSessionId).toBe(s.paymentSessionId);
    expect(Array.isArray(evt.deliveries)).toBe(true);
    const redelivered = await client.events.redeliver(evt.id);
    expect(redelivered.eventId).toBe(evt.id);
    const att = await client.events.attempts(evt.id);
    expect(Array.isArray(att.data)).toBe(true);
  });

  test("refund events: a real refund.created verifies and narrows to the refund; events.list and retrieve carry it", async () => {
    const ep = await client.webhookEndpoints.create({ url: `http://127.0.0.1:${receiver.port}/refunds` });
    const s = await client.paymentSessions.create({ amount: "3.00", currency: "USD" });
    await svc.services.database.sql`
      insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
      values (${s.paymentSessionId}, ${s.networks[0]!.chainId}, 'in', ${`0x${"ef".repeat(32)}`}, 0, 3000000, now())`;
    const refund = await client.refunds.create(s.paymentSessionId, { amount: "1.50", reason: "requested_by_customer" });
    const delivery = await (async () => {
      for (let i = 0; i < 100; i++) {
        // This endpoint's delivery: the merchant's other endpoints (at the same receiver) get the event too, signed with their own secrets.
        const d = received.find((r) => r.path === "/refunds" && r.body.includes(refund.refundId));
        if (d) return d;
        await Bun.sleep(50);
      }
      throw new Error("no refund.created delivered");
    })();
    const event = await verifyWebhook(delivery.body, delivery.headers, ep.secret);
    if (event.type !== "refund.created") throw new Error(`expected refund.created, got ${event.type}`);
    // Narrowed by `type`: the data is the refund (refundId, parts), with its place in the session's sequence.
    expect(event.data).toEqual({ ...(await client.refunds.retrieve(refund.refundId)), sequence: 2 });
    const page = await client.events.list({ paymentSessionId: s.paymentSessionId });
    expect(page.data.map((e) => e.type)).toEqual(["refund.created", "payment_session.pending"]);
    const only = await client.events.list({ paymentSessionId: s.paymentSessionId, type: "refund.created" });
    expect(only.data.map((e) => e.id)).toEqual([event.id]);
    const again = await client.events.retrieve(event.id);
    if (again.type !== "refund.created") throw new Error("expected the refund event");
    expect(again.data.refundId).toBe(refund.refundId);
    expect((await client.events.redeliver(event.id)).deliveries.map((d) => d.webhookEndpointId)).toContain(ep.id);
  });

  test("settlement addresses: list and set (EIP-55 out; a bad checksum is a typed error)", async () => {
    const list = await client.settlementAddresses.list();
    expect(list.length).toBeGreaterThan(0);
    const chainId = list[0]!.chainId;
    const set = await client.settlementAddresses.set(chainId, "0x00000000000000000000000000000000000000b2");
    expect(set).toMatchObject({ chainId, isDefault: false });
    const bad = await client.settlementAddresses.set(chainId, "0xAbCdEf0000000000000000000000000000000000").catch((e) => e);
    expect(bad).toMatchObject({ code: "address_checksum_invalid", status: 400 });
  });
});
