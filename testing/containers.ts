/**
 * `bun run test:containers` — Paysession the way self-hosters deploy it (docs/operators.md, "Run
 * with containers"): the image of the Containerfile, the compose set of compose.yaml started with
 * podman-compose, and a rolling upgrade to a second image with a new migration. Not part of
 * `bun test`: it needs podman (and runc), builds images and takes minutes.
 *
 * 1. Builds the images: the base (a Debian bookworm made with mmdebstrap when CONTAINERS_BASE is
 *    not given and no such local image exists: no registry is needed), Paysession's image (tag v1),
 *    Postgres and the balancer from Debian's packages, and v2: v1 plus one harmless migration that
 *    exists only in this test's build context (testing/containers/upgrade-migration.sql).
 * 2. Starts the compose set (project `paysession-containers-test`, its own secrets and volumes),
 *    waits for two API containers behind the balancer, the workers and an active and a standby
 *    indexer.
 * 3. Reads the pages the API builds at run time (SDK and checkout bundles, API reference, dashboard
 *    sign-in) through the balancer. Creates a sandbox session and pays it (the sandbox's pay) through the balancer, SIGKILLs one
 *    API container and the session runner's container at once, and waits for it to settle (SUCCEEDED) once the runner
 *    is back (the restart policy, or this script as its supervisor).
 * 4. With sessions created (and read) through the balancer and paid on the chain all along (no
 *    retries by the client):
 *    runs v2's migrations (the migrate service on v2), then replaces each container one at a time
 *    (stop with SIGTERM: it drains; start it on v2; wait until it is ready and registered) — the
 *    APIs, the workers, the standby indexer, then the active one.
 * 5. Waits for every paid session to be SUCCEEDED, prints one JSON line and exits 1 unless no
 *    request failed, no payment was lost, every replaced container exited 0 on its SIGTERM, every
 *    node runs v2 and the database holds v2's migration.
 *
 * Settings: CONTAINERS_BASE (a Debian bookworm image; default: build one), CONTAINERS_KEEP=1 (leave
 * the set running at the end), CONTAINERS_TRAFFIC_PER_SECOND (2 sessions a second).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import type { Address } from "viem";
import { freePort } from "./ports.ts";
import { localClients } from "../shared/devchain/clients.ts";
import { mintTestUsd } from "../shared/contracts/deploy.ts";
import { describeError, messageOf } from "../shared/describe-error.ts";

const ROOT = resolve(import.meta.dir, "..");
const PROJECT = "paysession-containers-test";
const LOCAL_BASE = "localhost/debian-bookworm-minbase:latest";
const IMAGE = "localhost/paysession";
const POSTGRES_IMAGE = "localhost/paysession-postgres:latest";
const BALANCER_IMAGE = "localhost/paysession-balancer:latest";
const TRAFFIC_PER_SECOND = Number(process.env.CONTAINERS_TRAFFIC_PER_SECOND ?? 2);
/** What `stop_grace_period` says in compose.yaml (podman-compose does not pass it on). */
const STOP_GRACE_SECONDS = 40;
/** The order of a rolling upgrade (docs/topology.md): the APIs, the workers, the standby indexer, the active one. */
const ROLL = ["api-1", "api-2", "actors", "sweeper", "webhooks"];

const t0 = Date.now();
const seconds = (from: number) => Math.round((Date.now() - from) / 100) / 10;
const say = (line: string) => console.error(`[containers +${seconds(t0)}s] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const work = mkdtempSync(join(tmpdir(), "paysession-containers-"));
const secrets = join(work, "secrets");
const timings: Record<string, number> = {};

// ------------------------------------------------------------------ commands

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(cmd: string[], opts: { env?: Record<string, string>; cwd?: string; quiet?: boolean } = {}): Promise<Run> {
  const p = Bun.spawn(cmd, { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

async function must(cmd: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<string> {
  const r = await run(cmd, opts);
  if (r.code !== 0) throw new Error(`${cmd.join(" ")} exited ${r.code}:\n${(r.err + r.out).slice(-3000)}`);
  return r.out;
}

/** The compose file's variables for one image tag (the rest of the set is the same for both). */
let chainPort = 0;
function composeEnv(tag: string, port: number): Record<string, string> {
  return { PAYSESSION_IMAGE: `${IMAGE}:${tag}`, POSTGRES_IMAGE, BALANCER_IMAGE, PAYSESSION_SECRETS: secrets, PAYSESSION_PORT: String(port), PAYSESSION_CHAIN_PORT: String(chainPort) };
}

function compose(args: string[], env: Record<string, string>) {
  return must(["podman-compose", "-p", PROJECT, "-f", join(ROOT, "compose.yaml"), ...args], { env });
}

/** podman-compose names a service's container `<project>_<service>_1`. */
const container = (service: string) => `${PROJECT}_${service}_1`;

/** The admin command inside a running API container (its secrets are there: container/entrypoint.sh). */
async function admin(...args: string[]): Promise<string> {
  return must(["podman", "exec", container("api-2"), "/app/container/entrypoint.sh", "admin", ...args]);
}

async function psql(query: string): Promise<string> {
  return (await must(["podman", "exec", container("postgres"), "psql", "-U", "paysession", "-d", "paysession", "-At", "-c", query])).trim();
}

async function eventually<T>(what: string, ms: number, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${messageOf(last)}` : ""}`);
    await sleep(500);
  }
}

// ------------------------------------------------------------------ images

async function imageExists(name: string) {
  return (await run(["podman", "image", "exists", name])).code === 0;
}

/** A Debian bookworm base image without a registry: mmdebstrap, with this machine's extra CAs. */
async function baseImage(): Promise<string> {
  if (process.env.CONTAINERS_BASE) return process.env.CONTAINERS_BASE;
  if (await imageExists(LOCAL_BASE)) return LOCAL_BASE;
  say("building the base image with mmdebstrap (once)");
  const tar = join(work, "rootfs.tar");
  await must([
    "mmdebstrap", "--variant=minbase", "--include=ca-certificates",
    // An egress proxy's CA, where the machine has one, so that apt and npm work inside the build.
    "--customize-hook=cp /usr/local/share/ca-certificates/*.crt \"$1/usr/local/share/ca-certificates/\" 2>/dev/null || true",
    "--customize-hook=chroot \"$1\" update-ca-certificates",
    "bookworm", tar,
  ]);
  await must(["podman", "import", tar, LOCAL_BASE]);
  rmSync(tar);
  return LOCAL_BASE;
}

async function build(base: string) {
  const common = ["podman", "build", "--format", "docker", "--build-arg", `BASE=${base}`];
  await must([...common, "-t", `${IMAGE}:v1`, "-f", "Containerfile", "."]);
  await must([...common, "-t", POSTGRES_IMAGE, "-f", "container/postgres.Containerfile", "."]);
  await must([...common, "-t", BALANCER_IMAGE, "-f", "container/balancer.Containerfile", "."]);
}

/**
 * v2: the same tree plus one migration, added only in this build context (never in drizzle/):
 * its SQL file and the journal with one entry more, numbered after the last one.
 */
async function buildV2(): Promise<string> {
  const ctx = join(work, "v2");
  mkdirSync(join(ctx, "drizzle/meta"), { recursive: true });
  const journal = JSON.parse(readFileSync(join(ROOT, "drizzle/meta/_journal.json"), "utf8")) as { entries: { idx: number; tag: string; version: string; when: number; breakpoints: boolean }[] };
  const last = journal.entries.at(-1)!;
  const idx = last.idx + 1;
  const tag = `${String(idx).padStart(4, "0")}_container_upgrade_probe`;
  journal.entries.push({ ...last, idx, tag, when: Date.now() });
  writeFileSync(join(ctx, "drizzle/meta/_journal.json"), JSON.stringify(journal, null, 2));
  copyFileSync(join(import.meta.dir, "containers/upgrade-migration.sql"), join(ctx, `drizzle/${tag}.sql`));
  writeFileSync(join(ctx, "Containerfile"), `FROM ${IMAGE}:v1\nCOPY drizzle/ /app/drizzle/\n`);
  await must(["podman", "build", "--format", "docker", "-t", `${IMAGE}:v2`, "."], { cwd: ctx });
  return tag;
}

async function imageSizeMb(name: string) {
  return Math.round(Number((await must(["podman", "image", "inspect", "--format", "{{.Size}}", name])).trim()) / 1e6);
}

// ------------------------------------------------------------------ the set

function writeSecrets() {
  mkdirSync(secrets, { recursive: true });
  const password = randomBytes(18).toString("hex");
  writeFileSync(join(secrets, "postgres_password"), `${password}\n`, { mode: 0o644 });
  writeFileSync(join(secrets, "database_url"), `postgres://paysession:${password}@postgres:5432/paysession\n`, { mode: 0o644 });
  writeFileSync(join(secrets, "encryption_key"), `${randomBytes(32).toString("base64")}\n`, { mode: 0o644 });
}

interface Node {
  id: string;
  roles: string[];
  migration: string;
  indexer: string | null;
  alive: boolean;
}

async function nodes(): Promise<{ nodes: Node[]; indexer: { node: string } | null }> {
  return JSON.parse(await admin("nodes", "--json"));
}

const live = (all: Node[], role: string) => all.filter((n) => n.alive && n.roles.includes(role));

/** Ready: the API container's /readyz answers 200 from inside it (the image's health check). */
async function apiReady(service: string) {
  return (await run(["podman", "exec", container(service), "bun", "container/healthcheck.ts"])).code === 0;
}

/** The balancer's view of one API container (HAProxy's stats, inside the balancer's container). */
async function balancerSees(service: string): Promise<string> {
  const csv = await must(["podman", "exec", container("balancer"), "bash", "-c",
    'exec 3<>/dev/tcp/127.0.0.1/8404 && printf "GET /stats;csv HTTP/1.0\\r\\n\\r\\n" >&3 && cat <&3']);
  const row = csv.split("\n").find((line) => line.startsWith(`api,${service},`));
  return row?.split(",")[17] ?? "absent";
}

/** Each worker role registered (and, for the indexers, one active and one standby) on `migration`. */
async function workersOn(migration: string) {
  const all = (await nodes()).nodes.filter((n) => n.alive && n.migration === migration);
  const indexers = live(all, "indexer");
  return ["actors", "sweeper", "webhooks"].every((role) => live(all, role).length >= 1) &&
    indexers.some((n) => n.indexer === "active") && indexers.some((n) => n.indexer === "standby");
}

// ------------------------------------------------------------------ the client

interface Traffic {
  requests: number;
  phase: string;
  failed: { what: string; phase: string; status: number; body: string }[];
  paid: string[];
}

function client(base: string, key: string, traffic?: Traffic) {
  return async (what: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    if (traffic) traffic.requests++;
    let status = 0;
    let text = "";
    try {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(15_000),
      });
      status = res.status;
      text = await res.text();
    } catch (e) {
      text = messageOf(e);
    }
    if (traffic && (status < 200 || status > 299)) traffic.failed.push({ what, phase: traffic.phase, status, body: text.slice(0, 300) });
    return { status, body: (() => { try { return JSON.parse(text); } catch { return {}; } })() as any };
  };
}

/**
 * Creates a session through the balancer and pays it on the chain, as a payer's wallet does (a
 * TestUSD transfer to its deposit address, one at a time: one paying account). The sandbox's
 * "pay it for me" is not used: its faucet serializes its sends per process, so two API processes
 * sending from the one faucet account at once can collide on its nonce.
 */
let payments: Promise<unknown> = Promise.resolve();
async function createAndPay(api: ReturnType<typeof client>, n: number): Promise<string | undefined> {
  const created = await api("create", "POST", "/payment-sessions", { amount: `${1 + (n % 50)}.25`, currency: "USD" }, { "idempotency-key": `containers-${n}-${t0}` });
  if (created.status !== 201) return undefined;
  const id = created.body.paymentSessionId as string;
  const network = created.body.networks[0] as { depositAddress: Address; amountBaseUnits: string; tokenAddress: Address };
  const clients = localClients(`http://127.0.0.1:${chainPort}`, 31337);
  const paid = payments.then(() => mintTestUsd({ ...clients, to: network.depositAddress, amount: BigInt(network.amountBaseUnits), token: network.tokenAddress }));
  payments = paid.catch(() => {});
  await paid;
  // A read through the balancer too, as a merchant's server does.
  await api("read", "GET", `/payment-sessions/${id}`);
  return id;
}

async function statusOf(api: ReturnType<typeof client>, id: string) {
  return (await api("read", "GET", `/payment-sessions/${id}`)).body.status as string | undefined;
}

// ------------------------------------------------------------------ the roll

/** How each replaced container stopped: its exit code (0: drained and stopped cleanly) and the time it took. */
const stops: Record<string, { code: number; seconds: number }> = {};

/** Stops one service's container (SIGTERM: it drains) and starts it again from `tag`. */
async function replace(service: string, tag: string, port: number) {
  const from = Date.now();
  await must(["podman", "stop", "-t", String(STOP_GRACE_SECONDS), container(service)]);
  const code = Number((await must(["podman", "inspect", "--format", "{{.State.ExitCode}}", container(service)])).trim());
  stops[service] = { code, seconds: seconds(from) };
  await must(["podman", "rm", container(service)]);
  await compose(["up", "-d", "--no-deps", service], composeEnv(tag, port));
}

async function main() {
  for (const tool of ["podman", "podman-compose"]) {
    if ((await run(["sh", "-c", `command -v ${tool}`])).code !== 0) throw new Error(`${tool} is not installed (docs/operators.md, Run with containers)`);
  }
  let from = Date.now();
  const base = await baseImage();
  timings.baseImageSeconds = seconds(from);
  from = Date.now();
  say(`building the images on ${base}`);
  await build(base);
  timings.buildSeconds = seconds(from);
  from = Date.now();
  const probeTag = await buildV2();
  timings.buildV2Seconds = seconds(from);
  const imageMb = await imageSizeMb(`${IMAGE}:v1`);
  say(`image ${IMAGE}:v1 is ${imageMb} MB; v2 adds ${probeTag}`);

  // A set left by an interrupted run goes first.
  const port = await freePort();
  chainPort = await freePort();
  writeSecrets();
  await run(["podman-compose", "-p", PROJECT, "-f", join(ROOT, "compose.yaml"), "down", "-v"], { env: composeEnv("v1", port) });

  from = Date.now();
  say("starting the compose set on v1");
  await compose(["up", "-d"], composeEnv("v1", port));
  const base_url = `http://127.0.0.1:${port}`;
  // Its restart policy tries it again while Postgres is not answering yet.
  await eventually("the migrate service to exit 0", 120_000, async () => {
    const state = (await must(["podman", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", container("migrate")])).trim();
    if (state === "exited 0") return true;
    throw new Error(`migrate: ${state}: ${(await run(["podman", "logs", "--tail", "5", container("migrate")])).err}`);
  });
  await eventually("both APIs ready", 120_000, async () => (await apiReady("api-1")) && (await apiReady("api-2")));
  const v1Migration = (await nodes()).nodes.find((n) => n.alive)!.migration;
  await eventually("the workers and both indexers registered", 180_000, () => workersOn(v1Migration));
  await eventually("the balancer answering /readyz", 30_000, async () => (await fetch(`${base_url}/readyz`).catch(() => undefined))?.status === 200);
  timings.upSeconds = seconds(from);
  say(`up in ${timings.upSeconds}s`);

  const key = JSON.parse(await admin("merchant:create", "--name", "Containers", "--json")).keys.sandbox as string;
  const traffic: Traffic = { requests: 0, phase: "pages", failed: [], paid: [] };
  const api = client(base_url, key, traffic);

  // What the API builds or reads from its files at run time, on the read-only image: the SDK and
  // checkout bundles, the checkout page, the API reference, the dashboard's sign-in.
  for (const path of ["/sdk/v1/paysession.js", "/checkout/v1/", "/checkout/v1/checkout.js", "/docs", "/docs/json", "/dashboard/sign-in"]) {
    await api(`page ${path}`, "GET", path);
  }
  traffic.phase = "first payment";

  // ---------------------------------------------------------------- a payment through kills
  from = Date.now();
  // The first is paid by the sandbox through the balancer (one payment: its faucet is not shared).
  const created = await api("create", "POST", "/payment-sessions", { amount: "12.34", currency: "USD" }, { "idempotency-key": `containers-0-${t0}` });
  const first = created.body.paymentSessionId as string | undefined;
  if (!first || (await api("pay", "POST", `/sandbox/payment-sessions/${first}/pay`)).status !== 200) throw new Error(`the first payment failed: ${JSON.stringify(traffic.failed)}`);
  traffic.paid.push(first);
  say(`paid ${first}; SIGKILL to api-1 and actors`);
  await must(["podman", "kill", "--signal", "KILL", container("api-1")]);
  await must(["podman", "kill", "--signal", "KILL", container("actors")]);
  const killedAt = Date.now();
  // Their supervisor brings them back: the restart policy does under docker; podman without
  // systemd restarts only on failure, so this script does it when podman did not within 5 s.
  await sleep(5_000);
  const restarted: string[] = [];
  for (const service of ["api-1", "actors"]) {
    const state = (await must(["podman", "inspect", "--format", "{{.State.Status}}", container(service)])).trim();
    if (state !== "running") {
      await must(["podman", "start", container(service)]);
      restarted.push(service);
    }
  }
  const readAfterKill = client(base_url, key);
  await eventually(`${first} SUCCEEDED after the kills`, 120_000, async () => (await statusOf(readAfterKill, first)) === "SUCCEEDED");
  timings.killToSucceededSeconds = seconds(killedAt);
  timings.firstPaymentSeconds = seconds(from);
  say(`${first} SUCCEEDED ${timings.killToSucceededSeconds}s after the kills (restarted by this script: ${restarted.join(", ") || "none"})`);
  await eventually("api-1 ready again", 60_000, () => apiReady("api-1"));
  await eventually("the workers registered again", 60_000, () => workersOn(v1Migration));
  await eventually("the balancer sending to api-1 again", 60_000, async () => (await balancerSees("api-1")) === "UP");
  const failedBeforeRoll = traffic.failed.length;

  // ---------------------------------------------------------------- the upgrade under traffic
  let running = true;
  let n = 1;
  const inFlight = new Set<Promise<void>>();
  const load = (async () => {
    while (running) {
      const i = n++;
      const p = createAndPay(api, i).then((id) => void (id && traffic.paid.push(id)));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      await sleep(1000 / TRAFFIC_PER_SECOND);
    }
  })();
  await sleep(5_000);

  from = Date.now();
  traffic.phase = "migrate";
  say("upgrade: migrating with v2");
  await must(["podman", "rm", container("migrate")]);
  await compose(["up", "-d", "--no-deps", "migrate"], composeEnv("v2", port));
  const migrated = (await must(["podman", "wait", container("migrate")])).trim();
  if (migrated !== "0") throw new Error(`v2's migrate exited ${migrated}: ${(await run(["podman", "logs", container("migrate")])).err}`);
  timings.migrateSeconds = seconds(from);
  for (const service of ROLL) {
    say(`upgrade: ${service} → v2`);
    traffic.phase = service;
    await replace(service, "v2", port);
    if (service.startsWith("api-")) {
      await eventually(`${service} ready on v2`, 120_000, () => apiReady(service));
      // Back in the balancer's rotation before the next one drains.
      await eventually(`the balancer sending to ${service}`, 60_000, async () => (await balancerSees(service)) === "UP");
    }
  }
  // The indexers last: the standby first, then the active one (its standby takes the seat).
  const current = await nodes();
  const activeNode = current.indexer?.node;
  const activeService = await (async () => {
    for (const service of ["indexer-1", "indexer-2"]) {
      const host = (await must(["podman", "inspect", "--format", "{{.Config.Hostname}}", container(service)])).trim();
      const node = current.nodes.find((x: any) => x.alive && x.host === host && x.roles.includes("indexer"));
      if (node?.id === activeNode) return service;
    }
    return "indexer-1";
  })();
  const standbyService = activeService === "indexer-1" ? "indexer-2" : "indexer-1";
  for (const service of [standbyService, activeService]) {
    say(`upgrade: ${service} → v2`);
    traffic.phase = service;
    await replace(service, "v2", port);
    await eventually(`${service} registered on v2`, 180_000, async () => {
      const all = (await nodes()).nodes;
      return live(all, "indexer").filter((x) => x.migration === probeTag).length >= (service === standbyService ? 1 : 2);
    });
  }
  await eventually("every worker and both indexers on v2", 180_000, () => workersOn(probeTag));
  timings.upgradeSeconds = seconds(from);
  say(`upgraded in ${timings.upgradeSeconds}s`);
  traffic.phase = "after the upgrade";
  await sleep(5_000);
  running = false;
  await load;
  await Promise.all([...inFlight]);

  // ---------------------------------------------------------------- every payment settled
  from = Date.now();
  const reader = client(base_url, key);
  const unsettled = new Set(traffic.paid);
  await eventually(`${traffic.paid.length} payments SUCCEEDED`, 180_000, async () => {
    for (const id of [...unsettled]) if ((await statusOf(reader, id)) === "SUCCEEDED") unsettled.delete(id);
    return unsettled.size === 0;
  }).catch(() => undefined);
  timings.settleAfterTrafficSeconds = seconds(from);

  const after = (await nodes()).nodes.filter((x) => x.alive);
  const builds = [...new Set(after.map((x) => x.migration))];
  const probeApplied = await psql(`select count(*) from app.__migrations where tag = '${probeTag}'`);
  const result = {
    imageMb,
    image: `${IMAGE}:v1`,
    upgradeMigration: probeTag,
    requests: traffic.requests,
    failedRequests: traffic.failed.length,
    failedBeforeRoll,
    payments: traffic.paid.length,
    lostPayments: unsettled.size,
    killed: ["api-1", "actors"],
    restartedByScript: restarted,
    liveNodes: after.length,
    builds,
    stops,
    timings: { ...timings, totalSeconds: seconds(t0) },
  };
  console.log(JSON.stringify(result));
  const problems: string[] = [];
  if (traffic.failed.length) problems.push(`failed requests: ${JSON.stringify(traffic.failed.slice(0, 10))}`);
  if (unsettled.size) problems.push(`payments not SUCCEEDED: ${[...unsettled].join(", ")}`);
  if (traffic.paid.length < 10) problems.push(`only ${traffic.paid.length} payments during the run`);
  if (builds.length !== 1 || builds[0] !== probeTag) problems.push(`live nodes' builds after the upgrade: ${builds.join(", ")}`);
  if (probeApplied !== "1") problems.push(`${probeTag} not applied`);
  const unclean = Object.entries(stops).filter(([, stop]) => stop.code !== 0);
  if (unclean.length) problems.push(`stopped without exit 0 (SIGTERM should drain and exit 0): ${JSON.stringify(Object.fromEntries(unclean))}`);
  if (problems.length) throw new Error(problems.join("\n"));
}

/** On failure: every container's log, kept for a look after the set is gone. */
async function keepLogs(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "paysession-containers-logs-"));
  const names = (await run(["podman", "ps", "-a", "--format", "{{.Names}}", "--filter", `name=${PROJECT}_`])).out.split("\n").filter(Boolean);
  for (const name of names) {
    const logs = await run(["podman", "logs", name]);
    writeFileSync(join(dir, `${name}.log`), logs.out + logs.err);
  }
  return dir;
}

async function teardown() {
  if (process.env.CONTAINERS_KEEP === "1") {
    say(`left running: podman-compose -p ${PROJECT} down -v (secrets in ${secrets})`);
    return;
  }
  await run(["podman-compose", "-p", PROJECT, "-f", join(ROOT, "compose.yaml"), "down", "-v"], { env: composeEnv("v2", 8080) });
  rmSync(work, { recursive: true, force: true });
}

let code = 0;
try {
  await main();
  say("passed");
} catch (e) {
  console.error(describeError(e));
  code = 1;
  say(`containers' logs in ${await keepLogs().catch(() => "(none)")}`);
} finally {
  await teardown();
}
process.exit(code);
