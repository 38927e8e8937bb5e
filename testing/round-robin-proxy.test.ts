import { afterAll, expect, test } from "bun:test";
import { freePort } from "./ports.ts";
import { startRoundRobinProxy } from "./round-robin-proxy.ts";

const servers: { stop(force?: boolean): unknown }[] = [];
afterAll(() => servers.forEach((s) => s.stop(true)));

function upstream(name: string) {
  const s = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      return Response.json({ name, method: req.method, path: new URL(req.url).pathname + new URL(req.url).search, body: await req.text() }, { status: 201 });
    },
  });
  servers.push(s);
  return `http://127.0.0.1:${s.port}`;
}

test("requests go round the live upstreams in turn; a refused connection is skipped for that request", async () => {
  const dead = `http://127.0.0.1:${await freePort()}`;
  const proxy = startRoundRobinProxy([upstream("a"), dead, upstream("b")]);
  servers.push(proxy);
  const names: string[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await fetch(`${proxy.url}/x?i=${i}`, { method: "POST", body: `n${i}` });
    expect(res.status).toBe(201);
    const j = (await res.json()) as { name: string; path: string; body: string };
    expect(j.path).toBe(`/x?i=${i}`);
    expect(j.body).toBe(`n${i}`);
    names.push(j.name);
  }
  // a, (dead → b), b, a, (dead → b), b
  expect(names).toEqual(["a", "b", "b", "a", "b", "b"]);
  expect(proxy.failures()).toBe(0);
});

test("no upstream taking the connection is a 502", async () => {
  const proxy = startRoundRobinProxy([`http://127.0.0.1:${await freePort()}`]);
  servers.push(proxy);
  const res = await fetch(`${proxy.url}/y`);
  expect(res.status).toBe(502);
  expect(proxy.failures()).toBe(1);
});
