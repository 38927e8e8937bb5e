/**
 * The outbox and its worker against real parts: Postgres, and real SMTP servers — the catcher
 * the service runs in development, and servers that refuse (a 5xx, a 4xx) — with each mail read
 * back by an independent parser (mailparser) as a mail client would.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { eventually } from "../../../testing/eventually.ts";
import { startMailCatcher, type MailCatcher } from "./catcher.ts";
import { enqueueMail } from "./outbox.ts";
import { MailWorker } from "./worker.ts";
import { createUser } from "../dashboard/users.ts";

let svc: TestService;
let catcher: MailCatcher;
beforeAll(async () => {
  catcher = await startMailCatcher(mkdtempSync(join(tmpdir(), "mail-")));
  svc = await startTestService({ SERVICE_SMTP_URL: catcher.url, SERVICE_MAIL_FROM: "Shop payments <payments@shop.test>" });
}, 60_000);
afterAll(async () => {
  await svc?.close();
  await catcher?.stop();
});

const sql = () => svc.services.database.sql;
const key = () => svc.services.encryptionKey;
/** The catcher's files, oldest first (none before its first mail: it makes its folder then). */
const safeMails = () => {
  try {
    return readdirSync(catcher.dir).sort();
  } catch {
    return [];
  }
};

test("a mail queued in a transaction reaches a real SMTP server once it commits, as written; its body is sealed in the table", async () => {
  expect(svc.services.mailMode).toBe("smtp");
  const before = safeMails().length;
  const id = await sql().begin((tx) =>
    enqueueMail(tx, key(), { to: "ada@example.com", kind: "test", subject: "Reset your password", text: "Open https://pay.test/reset/secret-token-123 within 30 minutes.", html: "<p>Open the link</p>" }),
  );
  const files = await eventually(() => (safeMails().length > before ? safeMails() : undefined), "the mail in the catcher");
  const parsed = await simpleParser(readFileSync(join(catcher.dir, files.at(-1)!)));
  expect(parsed.subject).toBe("Reset your password");
  expect(parsed.from?.value[0]).toEqual({ address: "payments@shop.test", name: "Shop payments" });
  expect((parsed.to as { value: { address: string }[] }).value[0]!.address).toBe("ada@example.com");
  expect(parsed.text?.trim()).toBe("Open https://pay.test/reset/secret-token-123 within 30 minutes.");
  expect(parsed.html).toContain("<p>Open the link</p>");
  expect(parsed.messageId).toBe(`<${id}@paysession.mail>`);
  // Recorded just after the server took it.
  const row = await eventually(async () => {
    const [r] = await sql()`select state, attempts, body_sealed, message_id, sent_at from app.mail_outbox where id = ${id}`;
    return r!.state === "sent" ? r : undefined;
  }, "the mail recorded sent");
  expect(row).toMatchObject({ state: "sent", attempts: 1, message_id: `<${id}@paysession.mail>` });
  expect(row!.sent_at).not.toBeNull();
  expect(row!.body_sealed).not.toContain("secret-token-123");
});

test("a mail of a transaction that rolls back is never sent", async () => {
  const before = safeMails().length;
  await expect(
    sql().begin(async (tx) => {
      await enqueueMail(tx, key(), { to: "ada@example.com", kind: "test", subject: "never", text: "never" });
      throw new Error("the change failed");
    }),
  ).rejects.toThrow("the change failed");
  // A mail after it goes out; the rolled-back one never does.
  await sql().begin((tx) => enqueueMail(tx, key(), { to: "ada@example.com", kind: "test", subject: "after", text: "after" }));
  const files = await eventually(() => (safeMails().length > before ? safeMails() : undefined), "the later mail");
  expect(files.length).toBe(before + 1);
  const [n] = await sql()`select count(*)::int as n from app.mail_outbox where subject = 'never'`;
  expect(n!.n).toBe(0);
});

/** An SMTP server that refuses every recipient with `code`, counting the tries. */
async function refusingServer(code: number): Promise<{ url: string; tries: () => number; stop(): Promise<void> }> {
  let tries = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onRcptTo(_addr, _session, cb) {
      tries++;
      cb(Object.assign(new Error(code >= 500 ? "5.1.1 no such mailbox" : "4.3.0 try again later"), { responseCode: code }));
    },
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.server.address() as { port: number }).port;
  return { url: `smtp://127.0.0.1:${port}`, tries: () => tries, stop: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A mail made due again for a worker of the test's own, once the service's worker is stopped. */
async function queued(subject: string): Promise<string> {
  const id = await enqueueMail(sql(), key(), { to: "bob@example.com", kind: "test", subject, text: "hello" });
  // The service's own worker may have taken it already: wait until it is out of its hands, then make it due again for ours.
  await eventually(async () => {
    const [r] = await sql()`select state from app.mail_outbox where id = ${id}`;
    return r!.state !== "sending";
  }, "the service's worker done with it");
  await sql()`update app.mail_outbox set state = 'pending', attempts = 0, next_attempt_at = now(), last_error = null, sent_at = null where id = ${id}`;
  return id;
}

test("a 5xx answer fails the mail at once with the server's words; a 4xx keeps it for a later try; neither loses it", async () => {
  for (const [code, expected] of [
    [550, { state: "failed", attempts: 1 }],
    [451, { state: "pending", attempts: 1 }],
  ] as const) {
    const server = await refusingServer(code);
    // The service's worker sends to the catcher; this one to the refusing server, on rows the other cannot reach first.
    const worker = new MailWorker({ sql: sql(), encryptionKey: key(), smtpUrl: server.url, from: "payments@shop.test", dashboardUrl: "http://x/dashboard" });
    try {
      await svc.mailWorker!.stop();
      const id = await queued(`refused ${code}`);
      await worker.drain();
      expect(server.tries()).toBeGreaterThanOrEqual(1);
      const [row] = await sql()`select state, attempts, last_error, next_attempt_at > now() + interval '20 seconds' as later from app.mail_outbox where id = ${id}`;
      expect(row).toMatchObject(expected);
      expect(row!.last_error).toContain(String(code));
      if (code < 500) expect(row!.later).toBe(true);
    } finally {
      await worker.stop();
      await server.stop();
    }
  }
});

test("a mail whose sender died mid-send (its lease ran out) is sent again; a late result of the old claim changes nothing", async () => {
  const worker = new MailWorker({ sql: sql(), encryptionKey: key(), smtpUrl: catcher.url, from: "payments@shop.test", dashboardUrl: "http://x/dashboard" });
  try {
    const id = await enqueueMail(sql(), key(), { to: "carol@example.com", kind: "test", subject: "lease", text: "hello" });
    // As a worker that claimed it and died: sending, attempts 1, its lease over.
    await sql()`update app.mail_outbox set state = 'sending', attempts = 1, next_attempt_at = now() - interval '1 second' where id = ${id}`;
    await worker.drain();
    const [row] = await sql()`select state, attempts from app.mail_outbox where id = ${id}`;
    expect(row).toEqual({ state: "sent", attempts: 2 });
    // The dead claim's result, arriving late, is fenced out by its attempt number.
    const late = await sql()`update app.mail_outbox set state = 'failed' where id = ${id} and attempts = 1 returning id`;
    expect(late).toHaveLength(0);
  } finally {
    await worker.stop();
  }
});

test("a production settlement change through the API tells every person of the account, written from its history line; a sandbox one tells no one", async () => {
  const m = await svc.merchant("Notice Shop");
  for (const email of ["owner@notice.test", "finance@notice.test"]) await createUser(svc.services.database.db, m.merchant.id, email, "a long enough password");
  const sandbox = await svc.call("PUT", "/settlement-addresses/31337", { auth: m.sandboxKey, body: { address: "0x00000000000000000000000000000000000000a1" } });
  expect(sandbox.status).toBe(200);
  // The service's worker was stopped by the test above: one of the test's own sends.
  const worker = new MailWorker({ sql: sql(), encryptionKey: key(), smtpUrl: catcher.url, from: "payments@shop.test", dashboardUrl: "http://x/dashboard" });
  await worker.start();
  const before = safeMails().length;
  const set = await svc.call("PUT", "/settlement-addresses/8453", { auth: m.liveKey, body: { address: "0x00000000000000000000000000000000000000b2" } });
  expect(set.status).toBe(200);
  const files = await eventually(() => (safeMails().length >= before + 2 ? safeMails() : undefined), "two notices").finally(() => worker.stop());
  const parsed = await Promise.all(files.slice(before).map((f) => simpleParser(readFileSync(join(catcher.dir, f)))));
  expect(parsed.map((p) => (p.to as { value: { address: string }[] }).value[0]!.address).sort()).toEqual(["finance@notice.test", "owner@notice.test"]);
  for (const p of parsed) {
    expect(p.subject).toBe("Notice Shop: the production settlement address on Base was changed");
    expect(p.text).toMatch(/now: {4}0x0{38}[bB]2/);
    expect(p.text).toMatch(/API key sk_live_\w+… changed where Notice Shop's production payments on Base settle/);
  }
  const rows = await sql()`select kind, count(*)::int as n from app.mail_outbox where merchant_id = ${m.merchant.id} group by kind`;
  expect(rows.map((r) => [r.kind, r.n])).toEqual([["settlement_address_changed", 2]]);
});
