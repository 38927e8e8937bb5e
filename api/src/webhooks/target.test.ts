import { expect, test } from "bun:test";
import { checkUrl, resolveTarget, TargetError, type Resolver } from "./target.ts";

function code(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof TargetError) return e.code;
    throw e;
  }
  return undefined;
}
async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TargetError) return e.code;
    throw e;
  }
  return undefined;
}

test("URL shape: https in production, http too in sandbox, nothing else", () => {
  expect(code(() => checkUrl("https://example.com/hook", "production"))).toBeUndefined();
  expect(code(() => checkUrl("http://example.com/hook", "production"))).toBe("url_https_required");
  expect(code(() => checkUrl("http://example.com/hook", "sandbox"))).toBeUndefined();
  expect(code(() => checkUrl("http://localhost:3000/hook", "sandbox"))).toBeUndefined();
  for (const bad of [
    "ftp://example.com/",
    "example.com/hook",
    "/hook",
    "https://user:pw@example.com/",
    "https://example.com/#frag",
    "https://exa mple.com/",
    "https://example.com/\n",
    "javascript:alert(1)",
    "file:///etc/passwd",
    "https://intranet/hook",
    "https://" + "a".repeat(2100) + ".com/",
  ]) {
    expect([bad, code(() => checkUrl(bad, "sandbox"))]).toEqual([bad, "url_invalid"]);
  }
});

const fake = (table: Record<string, string[]>): Resolver => async (host) => {
  const a = table[host];
  if (!a) throw new Error("ENOTFOUND");
  return a;
};

test("numeric host spellings are read as the URL standard reads them (127.0.0.1), then judged", async () => {
  for (const u of ["https://0x7f000001/", "https://2130706433/", "https://127.1/", "https://0177.0.0.1/"]) {
    const c = checkUrl(u, "production");
    expect(c.literal).toEqual(["127.0.0.1"]);
    expect(await codeOf(resolveTarget(c, "production"))).toBe("url_address_forbidden");
  }
});

test("resolution: every address must be allowed; literals and localhost need no DNS", async () => {
  const r = fake({ "ok.example": ["93.184.215.14", "2606:4700::1"], "inside.example": ["10.0.0.5"], "mixed.example": ["93.184.215.14", "127.0.0.1"], "meta.example": ["169.254.169.254"] });
  const prod = (u: string) => resolveTarget(checkUrl(u, "production"), "production", r);
  const sand = (u: string) => resolveTarget(checkUrl(u, "sandbox"), "sandbox", r, 5000, true);
  const sandStrict = (u: string) => resolveTarget(checkUrl(u, "sandbox"), "sandbox", r);
  expect(await prod("https://ok.example/")).toEqual(["93.184.215.14", "2606:4700::1"]);
  expect(await codeOf(prod("https://inside.example/"))).toBe("url_address_forbidden");
  expect(await codeOf(prod("https://mixed.example/"))).toBe("url_address_forbidden");
  expect(await codeOf(prod("https://meta.example/"))).toBe("url_address_forbidden");
  expect(await codeOf(prod("https://nowhere.example/"))).toBe("url_unresolvable");
  expect(await codeOf(prod("https://127.0.0.1/"))).toBe("url_address_forbidden");
  expect(await codeOf(prod("https://[::1]/"))).toBe("url_address_forbidden");
  expect(await codeOf(prod("https://[::ffff:192.168.0.1]/"))).toBe("url_address_forbidden");
  expect(await codeOf(prod("https://169.254.169.254/latest/meta-data"))).toBe("url_address_forbidden");
  expect(await codeOf(prod("https://[fd00:ec2::254]/"))).toBe("url_address_forbidden");
  expect(await codeOf(prod("https://0.0.0.0/"))).toBe("url_address_forbidden");
  expect(await codeOf(prod("https://localhost/"))).toBe("url_address_forbidden");
  expect(await codeOf(prod("https://api.localhost/"))).toBe("url_address_forbidden");
  expect(await prod("https://93.184.215.14:8443/x")).toEqual(["93.184.215.14"]);
  // sandbox: local and private targets only when allowed (SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS), metadata and link-local never
  for (const u of ["http://localhost:3000/", "http://inside.example/", "http://[::1]:8080/", "http://mixed.example/"]) {
    expect([u, await codeOf(sandStrict(u))]).toEqual([u, "url_address_forbidden"]);
  }
  expect(await sandStrict("http://ok.example/")).toEqual(["93.184.215.14", "2606:4700::1"]);
  expect(await sand("http://localhost:3000/")).toEqual(["127.0.0.1", "::1"]);
  expect(await sand("http://inside.example/")).toEqual(["10.0.0.5"]);
  expect(await sand("http://[::1]:8080/")).toEqual(["::1"]);
  expect(await codeOf(sand("http://meta.example/"))).toBe("url_address_forbidden");
  expect(await codeOf(sand("http://169.254.169.254/"))).toBe("url_address_forbidden");
  expect(await codeOf(sand("http://[fe80::1]/"))).toBe("url_address_forbidden");
});

test("a resolver that hangs is a url_unresolvable after the timeout, not a hang", async () => {
  const hang: Resolver = () => new Promise(() => {});
  const t0 = performance.now();
  expect(await codeOf(resolveTarget(checkUrl("https://slow.example/", "production"), "production", hang, 100))).toBe("url_unresolvable");
  expect(performance.now() - t0).toBeLessThan(1000);
});
