/**
 * Refund links over HTTP against a real service and Postgres (no chain: the sending is
 * sweeps/refund-links.test.ts): the create with `destination: "link"`, the link in the merchant's
 * view and nowhere in clear in the database, the payer's page (GET) and claim (POST form), the
 * approval, and every way a claim is refused with nothing changed — reused, expired, canceled,
 * guessed, malformed, zero, the vault's own, the token's or the deposit's address, another site's
 * form, too many claims — and two claims at once, of which one wins.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import { predictedAuthorizationBatchAddress, predictedFactoryAddress } from "../../../shared/contracts/addresses.ts";
import { startTestService, type TestService } from "../../../testing/service.ts";

let svc: TestService;
let key: string;
let otherKey: string;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_REFUND_CLAIMS_PER_HOUR: "1000" });
  key = (await svc.merchant("Blue Bottle Shop")).sandboxKey;
  otherKey = (await svc.merchant("Someone else")).sandboxKey;
});
afterAll(async () => {
  await svc?.close();
});

const sql = () => svc.services.database.sql;
let n = 0;
const PAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const OTHER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

/** A sandbox session that received `units` (6-decimal unit) of its first network's main token. */
async function paidSession(units = 5_000_000n): Promise<string> {
  const r = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "5.00", currency: "USD" } });
  expect(r.status).toBe(201);
  const id = r.body.paymentSessionId as string;
  const [d] = await sql()`select chain_id from app.session_deposits where session_id = ${id} order by chain_id limit 1`;
  await sql()`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
    values (${id}, ${d!.chain_id}, 'in', ${`0x${(++n).toString(16).padStart(64, "b")}`}, 0, ${units.toString()}::numeric, now())`;
  return id;
}

const refund = (id: string, body: Record<string, unknown>, auth = key) => svc.call("POST", `/payment-sessions/${id}/refunds`, { auth, body });
const retrieve = async (refundId: string) => (await svc.call("GET", `/refunds/${refundId}`, { auth: key })).body;
const pathOf = (claimUrl: string) => new URL(claimUrl).pathname;

async function linkRefund(extra: Record<string, unknown> = {}): Promise<{ sessionId: string; refundId: string; path: string; view: any }> {
  const sessionId = await paidSession();
  const r = await refund(sessionId, { amount: "1.25", reason: "requested_by_customer", destination: "link", ...extra });
  expect(r.status).toBe(201);
  return { sessionId, refundId: r.body.refundId, path: pathOf(r.body.claimUrl), view: r.body };
}

async function openPage(path: string): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(`${svc.url}${path}`);
  return { status: res.status, text: await res.text(), headers: res.headers };
}

function claim(path: string, address: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${svc.url}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ address }).toString(),
  });
}

/** The link's row as stored, and the refund's: what "nothing changed" is checked against. */
async function stored(refundId: string) {
  const [l] = await sql()`select claimed_at, claimed_address, approved_at from app.refund_links where refund_id = ${refundId}`;
  const [r] = await sql()`select state, waiting_reason, parts from app.refunds where id = ${refundId}`;
  return { link: l, refund: r };
}

describe("create", () => {
  test("destination link: PENDING awaiting_claim, no destination, the claimUrl; the amount is held at once (the cap)", async () => {
    const { sessionId, refundId, view } = await linkRefund();
    expect(view).toMatchObject({ status: "PENDING", waitingReason: "awaiting_claim", amount: "1.25", requireApproval: false, claimedAt: null });
    expect(view.parts[0].destination).toBeNull();
    expect(view.claimUrl).toMatch(new RegExp(`^${svc.config.sandboxPublicUrl.toString().replace(/\/$/, "")}/refund/rl_[0-9A-Za-z]{40}$`));
    const expires = Date.parse(view.claimExpiresAt) - Date.now();
    expect(expires).toBeGreaterThan(7 * 86400_000 - 60_000);
    expect(expires).toBeLessThan(7 * 86400_000 + 60_000);
    // The merchant reads the same URL again; the database holds it only hashed and sealed.
    expect((await retrieve(refundId)).claimUrl).toBe(view.claimUrl);
    const linkId = view.claimUrl.split("/").pop();
    const [row] = await sql()`select row_to_json(l)::text as j from app.refund_links l where refund_id = ${refundId}`;
    expect(row!.j).not.toContain(linkId.slice(3));
    // The cap holds for a linked refund exactly as for others.
    const session = await svc.call("GET", `/payment-sessions/${sessionId}`, { auth: key });
    expect(session.body.amountRefunded).toBe("1.25");
    const rest = await refund(sessionId, { amount: "3.76", reason: "other", destination: "link" });
    expect(rest.status).toBe(409);
    expect(rest.body.error.code).toBe("refund_exceeds_refundable");
    const list = await svc.call("GET", `/payment-sessions/${sessionId}/refunds`, { auth: key });
    expect(list.body.data[0].claimUrl).toBe(view.claimUrl);
  });

  test("an Idempotency-Key replays the same link; a link sealed under another key still reads, with claimUrl null", async () => {
    const id = await paidSession();
    const body = { amount: "1.00", reason: "other", destination: "link" };
    const first = await svc.call("POST", `/payment-sessions/${id}/refunds`, { auth: key, body, headers: { "idempotency-key": "link-1" } });
    const again = await svc.call("POST", `/payment-sessions/${id}/refunds`, { auth: key, body, headers: { "idempotency-key": "link-1" } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.claimUrl).toBe(first.body.claimUrl);
    const [c] = await sql()`select count(*)::int as n from app.refund_links l join app.refunds r on r.id = l.refund_id where r.session_id = ${id}`;
    expect(c!.n).toBe(1);
    // As after a change of SERVICE_ENCRYPTION_KEY: the merchant's reads go on; the payer's page still opens.
    const good = (await sql()`select link_sealed from app.refund_links where refund_id = ${first.body.refundId}`)[0]!.link_sealed as string;
    await sql()`update app.refund_links set link_sealed = ${"v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA==.AAAA"} where refund_id = ${first.body.refundId}`;
    const read = await retrieve(first.body.refundId);
    expect(read).toMatchObject({ refundId: first.body.refundId, claimUrl: null, waitingReason: "awaiting_claim" });
    expect(read.claimExpiresAt).not.toBeNull();
    expect((await openPage(pathOf(first.body.claimUrl))).status).toBe(200);
    await sql()`update app.refund_links set link_sealed = ${good} where refund_id = ${first.body.refundId}`;
  });

  test("an ordinary refund has no link: claimUrl null", async () => {
    const r = await refund(await paidSession(), { amount: "1.00", reason: "other" });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ claimUrl: null, claimExpiresAt: null, claimedAt: null, requireApproval: false });
  });

  test("its lifetime: linkExpiresInSeconds within 600 s and 30 days; link options without destination link are refused", async () => {
    const id = await paidSession();
    const short = await refund(id, { amount: "0.50", reason: "other", destination: "link", linkExpiresInSeconds: 3600 });
    expect(short.status).toBe(201);
    expect(Math.abs(Date.parse(short.body.claimExpiresAt) - Date.now() - 3600_000)).toBeLessThan(60_000);
    for (const linkExpiresInSeconds of [599, 30 * 86400 + 1]) {
      const r = await refund(id, { amount: "0.50", reason: "other", destination: "link", linkExpiresInSeconds });
      expect(r.status).toBe(400);
    }
    for (const extra of [{ requireApproval: true }, { linkExpiresInSeconds: 3600 }]) {
      const r = await refund(id, { amount: "0.50", reason: "other", ...extra });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("parameter_invalid");
    }
    const bad = await refund(id, { amount: "0.50", reason: "other", destination: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" });
    expect(bad.status).toBe(400);
    expect((await svc.call("GET", `/payment-sessions/${id}`, { auth: key })).body.amountRefunded).toBe("0.50");
  });
});

describe("the payer's page", () => {
  test("shows what the payer needs, a form, no cache, no referrer, never framed", async () => {
    const { path } = await linkRefund();
    const p = await openPage(path);
    expect(p.status).toBe(200);
    expect(p.headers.get("content-type")).toContain("text/html");
    expect(p.headers.get("cache-control")).toBe("no-store");
    expect(p.headers.get("referrer-policy")).toBe("no-referrer");
    expect(p.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(p.headers.get("content-security-policy")).toContain("form-action 'self'");
    expect(p.text).toContain("Blue Bottle Shop");
    expect(p.text).toContain("1.25");
    expect(p.text).toContain("TUSD");
    expect(p.text).toMatch(/<form[^>]+method="post"/);
    expect(p.text).toContain('name="address"');
    expect(p.text).not.toContain("Someone else");
  });

  test("a guessed id and a malformed one: 404, the same page", async () => {
    const guessed = await openPage(`/refund/rl_${"A".repeat(40)}`);
    expect(guessed.status).toBe(404);
    expect(guessed.text).toContain("This refund link does not exist");
    const malformed = await openPage("/refund/rl_short");
    expect(malformed.status).toBe(404);
    expect(malformed.text).toContain("This refund link does not exist");
    expect((await claim(`/refund/rl_${"B".repeat(40)}`, PAYER)).status).toBe(404);
  });
});

describe("claim", () => {
  test("sets every part's destination and makes it due; the link is single-use", async () => {
    const { refundId, path } = await linkRefund();
    const res = await claim(path, PAYER.toLowerCase());
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(path); // absolute: right from /refund/{id}/ too
    const v = await retrieve(refundId);
    expect(v).toMatchObject({ status: "PENDING", waitingReason: null });
    expect(v.parts[0].destination).toBe(PAYER);
    expect(v.claimedAt).not.toBeNull();
    const page = await openPage(path);
    expect(page.status).toBe(200);
    expect(page.text).toContain("claimed");
    expect(page.text).toContain(PAYER);
    expect(page.text).not.toContain('name="address"');
    // Used: a second claim changes nothing.
    const before = await stored(refundId);
    const again = await claim(path, OTHER);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("already been claimed");
    expect(await stored(refundId)).toEqual(before);
  });

  test("requireApproval: the claim waits awaiting_approval; POST /refunds/{id}/approve makes it due, once", async () => {
    const { refundId, path } = await linkRefund({ requireApproval: true });
    const early = await svc.call("POST", `/refunds/${refundId}/approve`, { auth: key, body: {} });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe("refund_not_approvable");
    expect(early.body.error.message).toContain("not been claimed yet");
    expect((await claim(path, PAYER)).status).toBe(303);
    const waiting = await retrieve(refundId);
    expect(waiting).toMatchObject({ waitingReason: "awaiting_approval", requireApproval: true, approvedAt: null });
    expect(Date.parse(waiting.claimedAt)).toBeGreaterThan(0);
    expect(waiting.parts[0].destination).toBe(PAYER);
    expect((await openPage(path)).text).toContain("approved");
    const foreign = await svc.call("POST", `/refunds/${refundId}/approve`, { auth: otherKey, body: {} });
    expect(foreign.status).toBe(404);
    const ok = await svc.call("POST", `/refunds/${refundId}/approve`, { auth: key, body: {} });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: "PENDING", waitingReason: null });
    expect(Date.parse(ok.body.approvedAt)).toBeGreaterThanOrEqual(Date.parse(waiting.claimedAt));
    const twice = await svc.call("POST", `/refunds/${refundId}/approve`, { auth: key, body: {} });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe("refund_not_approvable");
    expect(twice.body.error.message).toContain("approved already");
  });

  test("an ordinary refund cannot be approved", async () => {
    const r = await refund(await paidSession(), { amount: "1.00", reason: "other" });
    const a = await svc.call("POST", `/refunds/${r.body.refundId}/approve`, { auth: key, body: {} });
    expect(a.status).toBe(409);
    expect(a.body.error.code).toBe("refund_not_approvable");
    expect(a.body.error.message).toContain("has no refund link");
  });

  test("expired: the page says so and a claim sends nothing", async () => {
    const { refundId, path } = await linkRefund();
    await sql()`update app.refund_links set expires_at = now() - interval '1 second' where refund_id = ${refundId}`;
    const page = await openPage(path);
    expect(page.status).toBe(410);
    expect(page.text).toContain("expired");
    expect(page.text).not.toContain('name="address"');
    const before = await stored(refundId);
    const res = await claim(path, PAYER);
    expect(res.status).toBe(410);
    expect(await stored(refundId)).toEqual(before);
    expect(before.refund!.waiting_reason).toBe("awaiting_claim");
  });

  test("canceled by the merchant: the page says so and a claim sends nothing", async () => {
    const { refundId, path } = await linkRefund();
    expect((await svc.call("POST", `/refunds/${refundId}/cancel`, { auth: key, body: {} })).status).toBe(200);
    const page = await openPage(path);
    expect(page.status).toBe(410);
    expect(page.text).toContain("canceled");
    const before = await stored(refundId);
    expect((await claim(path, PAYER)).status).toBe(410);
    expect(await stored(refundId)).toEqual(before);
  });

  test("a claimed refund awaiting approval can still be canceled; its page then says canceled", async () => {
    const { refundId, path } = await linkRefund({ requireApproval: true });
    expect((await claim(path, PAYER)).status).toBe(303);
    expect((await svc.call("POST", `/refunds/${refundId}/cancel`, { auth: key, body: {} })).body.status).toBe("CANCELED");
    expect((await openPage(path)).text).toContain("canceled");
  });

  /** The deposit address of another session of the merchant's. */
  async function otherDeposit(): Promise<string> {
    const s = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "1.00", currency: "USD" } });
    const [row] = await sql()`select address from app.session_deposits where session_id = ${s.body.paymentSessionId} limit 1`;
    return row!.address as string;
  }

  test("addresses it must not go to: malformed, bad checksum, zero, the vault's, the token's, the deposit's, a contract of the service's, another stablecoin, another session's deposit — 422, the reason shown, nothing changed", async () => {
    const { sessionId, refundId, path } = await linkRefund();
    const balances = await svc.call("GET", "/refund-balances", { auth: key });
    const [d] = await sql()`select chain_id, token_address, address from app.session_deposits where session_id = ${sessionId} order by chain_id limit 1`;
    const vault = balances.body.data.find((b: { chainId: number }) => b.chainId === d!.chain_id).address as string;
    expect(vault).toMatch(/^0x/);
    const cases: [string, string][] = [
      ["not an address", "is not an address"],
      ["0x1234", "is not an address"],
      ["0x70997970C51812dc3A010C7d01b50e0d17dc79c8", "checksum"],
      [`0x${"0".repeat(40)}`, "zero address"],
      [vault, "refund balance"],
      [getAddress(d!.token_address as string), "token contract"],
      [d!.address as string, "payment address"],
      // Cut to a length and trimmed it would have been the first address.
      [`${PAYER}${" ".repeat(158)}${OTHER}`, "is not an address"],
      // Contracts that keep what is sent: the service's own, every stablecoin the network watches.
      [predictedAuthorizationBatchAddress(), "not a wallet"],
      [predictedFactoryAddress(), "not a wallet"],
      ...svc.services.networks.find((n) => n.chainId === d!.chain_id)!.stablecoins.map((c): [string, string] => [c.address, c.address.toLowerCase() === (d!.token_address as string).toLowerCase() ? "token contract" : "not a wallet"]),
      // Another session's deposit address: it would pay that session.
      [getAddress(await otherDeposit()), "not a wallet"],
    ];
    const before = await stored(refundId);
    for (const [address, says] of cases) {
      const res = await claim(path, address);
      expect(res.status).toBe(422);
      const text = await res.text();
      expect(text).toContain(says);
      expect(text).toContain('name="address"'); // the form again, to correct it
      expect(await stored(refundId)).toEqual(before);
    }
  });

  test("a form posted from another site is refused (403), nothing changed", async () => {
    const { refundId, path } = await linkRefund();
    const before = await stored(refundId);
    expect((await claim(path, PAYER, { origin: "https://evil.example" })).status).toBe(403);
    expect((await claim(path, PAYER, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect(await stored(refundId)).toEqual(before);
    // The same page's own form passes.
    expect((await claim(path, PAYER, { origin: new URL(svc.url).origin, "sec-fetch-site": "same-origin" })).status).toBe(303);
  });

  test("two claims at once: one wins, the other is told it was claimed; every part goes to the winner", async () => {
    const { refundId, path } = await linkRefund();
    const addresses = Array.from({ length: 8 }, (_, i) => getAddress(`0x${(i + 1).toString(16).padStart(40, "a")}`));
    const answers = await Promise.all(addresses.map((a) => claim(path, a)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 303)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(7);
    const winner = addresses[statuses.indexOf(303)]!;
    const v = await retrieve(refundId);
    expect(v.parts.map((p: { destination: string }) => p.destination)).toEqual([winner]);
    const [l] = await sql()`select claimed_address from app.refund_links where refund_id = ${refundId}`;
    expect(l!.claimed_address).toBe(winner.toLowerCase());
  });
});

test("the request log never shows a link's id", async () => {
  const logged = await startTestService({ SERVICE_LOG_REQUESTS: "true" });
  const lines: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
  try {
    const k = (await logged.merchant("Logged")).sandboxKey;
    const s = await logged.call("POST", "/payment-sessions", { auth: k, body: { amount: "5.00", currency: "USD" } });
    const [d] = await logged.services.database.sql`select chain_id from app.session_deposits where session_id = ${s.body.paymentSessionId} limit 1`;
    await logged.services.database.sql`
      insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
      values (${s.body.paymentSessionId}, ${d!.chain_id}, 'in', ${`0x${(++n).toString(16).padStart(64, "e")}`}, 0, 5000000, now())`;
    const r = await logged.call("POST", `/payment-sessions/${s.body.paymentSessionId}/refunds`, { auth: k, body: { reason: "other", destination: "link" } });
    const path = pathOf(r.body.claimUrl);
    await fetch(`${logged.url}${path}`);
    await fetch(`${logged.url}${path}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `address=${PAYER}`, redirect: "manual" });
    await Bun.sleep(50);
    // Mistyped, doubled, capitalised, with a trailing segment: the id is masked wherever it stands.
    const id = path.split("/").pop()!;
    for (const typo of [`//refund/${id}`, `/refund//${id}`, `/REFUND/${id}`, `/refund/${id}/`, `/refund/${id}/${id}`]) await fetch(`${logged.url}${typo}`);
    await fetch(`${logged.url}/refund/rl_${"A".repeat(40)}`);
    await Bun.sleep(50);
    const requests = lines.filter((l) => l.includes('"msg":"request"'));
    expect(requests.filter((l) => l.includes('"path":"/refund/{linkId}"')).length).toBeGreaterThanOrEqual(2);
    expect(lines.join("\n")).not.toContain(id.slice(3));
    // The status logged is the one answered, pages and redirects included.
    const statuses = requests.filter((l) => l.includes("/refund/")).map((l) => JSON.parse(l.slice(l.indexOf("{"))).status);
    expect(statuses.slice(0, 2)).toEqual([200, 303]);
    expect(statuses.at(-1)).toBe(404);
  } finally {
    console.log = original;
    await logged.close();
  }
});

test("claims are limited per link, not per client address: made-up ids and another link's refusals cost a payer nothing (429 with Retry-After)", async () => {
  const limited = await startTestService({ SERVICE_REFUND_CLAIMS_PER_HOUR: "2" });
  try {
    const k = (await limited.merchant("Limited")).sandboxKey;
    const paths: string[] = [];
    for (let i = 0; i < 2; i++) {
      const s = await limited.call("POST", "/payment-sessions", { auth: k, body: { amount: "5.00", currency: "USD" } });
      const [d] = await limited.services.database.sql`select chain_id from app.session_deposits where session_id = ${s.body.paymentSessionId} limit 1`;
      await limited.services.database.sql`
        insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
        values (${s.body.paymentSessionId}, ${d!.chain_id}, 'in', ${`0x${(++n).toString(16).padStart(64, "c")}`}, 0, 5000000, now())`;
      const r = await limited.call("POST", `/payment-sessions/${s.body.paymentSessionId}/refunds`, { auth: k, body: { reason: "other", destination: "link" } });
      paths.push(pathOf(r.body.claimUrl));
    }
    const post = (p: string, address: string) =>
      fetch(`${limited.url}${p}`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `address=${address}` });
    // A stranger's posts to ids that do not exist: 404, counted nowhere.
    for (let i = 0; i < 5; i++) expect((await post(`/refund/rl_${String(i).repeat(40)}`, PAYER)).status).toBe(404);
    // On one link, refused claims count: two, then 429.
    expect((await post(paths[0]!, "0x1234")).status).toBe(422);
    expect((await post(paths[0]!, "0x1234")).status).toBe(422);
    const third = await post(paths[0]!, PAYER);
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    // From the same address, another payer's link claims as usual, back to the page by its absolute path.
    const other = await post(paths[1]!, PAYER);
    expect(other.status).toBe(303);
    expect(other.headers.get("location")).toBe(paths[1]!);
    const [l] = await limited.services.database.sql`select count(*)::int as n from app.refund_links where claimed_at is not null`;
    expect(l!.n).toBe(1);
  } finally {
    await limited.close();
  }
});
