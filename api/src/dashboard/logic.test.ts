/** The dashboard's pure parts: escaping, throttle, search classification, CSV, cookies, timeline words. */
import { describe, expect, test } from "bun:test";
import { html, raw } from "./html.ts";
import { retryAfterSeconds, waitAfter } from "../credentials/sign-in-throttle.ts";
import { classifySearch, csvField, parseFilters } from "./transactions.ts";
import { csvRecords, misreadCells, startsFormula } from "../../../testing/csv.ts";
import { loginCookie, readCookie, secureCookies } from "./logins.ts";
import { clearFlashCookie, flashCookie, readFlash } from "./flash.ts";
import { originProblem } from "./request.ts";
import { randomBytes } from "node:crypto";
import { describe as describeEvent, tokenAmount } from "./timeline.ts";
import { normalizeEmail, passwordProblem } from "./users.ts";
import { sandboxToolsFor } from "./pages/transaction.ts";

describe("html", () => {
  test("escapes every interpolated value unless it is our own markup", () => {
    const evil = `<script>alert("x")</script>&'`;
    expect(html`<p>${evil}</p>`.toString()).toBe("<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>");
    expect(html`<p title="${evil}">${raw("<b>ok</b>")}</p>`.toString()).toBe('<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"><b>ok</b></p>');
    expect(html`${[html`<i>${"<"}</i>`, null, undefined, false, 0]}`.toString()).toBe("<i>&lt;</i>0");
  });
});

describe("sign-in throttle", () => {
  test("five failures are free, then the wait doubles from 30 s up to 15 min", () => {
    expect([0, 4, 5, 6, 7, 10, 40].map((n) => waitAfter(n, 5))).toEqual([0, 0, 30, 60, 120, 900, 900]);
  });
  test("the wait counts from the last failure; the address limit applies too", () => {
    const now = new Date("2026-01-01T00:01:00Z");
    const last = new Date("2026-01-01T00:00:50Z");
    const none = { count: 0, lastAt: null };
    expect(retryAfterSeconds({ count: 5, lastAt: last }, none, now)).toBe(20);
    expect(retryAfterSeconds({ count: 4, lastAt: last }, none, now)).toBe(0);
    expect(retryAfterSeconds(none, { count: 20, lastAt: last }, now)).toBe(20);
    expect(retryAfterSeconds({ count: 5, lastAt: new Date("2026-01-01T00:00:00Z") }, none, now)).toBe(0);
  });
});

describe("transactions", () => {
  test("a search is a session id, an address, a transaction hash, or else a reference", () => {
    expect(classifySearch("ps_4f9KpQ2xYz81LmNoPq7RsTuV")).toEqual({ kind: "session", id: "ps_4f9KpQ2xYz81LmNoPq7RsTuV" });
    expect(classifySearch(" 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 ")).toEqual({ kind: "address", address: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" });
    expect(classifySearch(`0x${"AB".repeat(32)}`)).toEqual({ kind: "tx", hash: `0x${"ab".repeat(32)}` });
    expect(classifySearch("order_1042")).toEqual({ kind: "reference", reference: "order_1042" });
    expect(classifySearch("   ")).toBeUndefined();
  });
  test("filters: bad values are dropped and reported", () => {
    expect(parseFilters({ status: "SUCCEEDED", from: "2026-01-01", to: "2026-02-30x", q: " x " })).toEqual({
      filters: { status: "SUCCEEDED", from: "2026-01-01", q: "x" },
      problems: ["The end date must be a date (YYYY-MM-DD)."],
    });
    expect(parseFilters({ status: "nope" }).problems).toEqual(["Unknown status; showing every status."]);
  });
  test("CSV fields: quoted, read back as written, and no reader of any separator meets a formula", () => {
    expect(csvField('a,"b"')).toBe('"a,""b"""');
    expect(csvField("order_1042")).toBe('"order_1042"');
    expect(csvField(null)).toBe("");
    expect(csvField("=HYPERLINK(1)")).toBe(`"'=HYPERLINK(1)"`);
    expect(csvField("  =1+2")).toBe(`"'  =1+2"`);
    expect(csvField("a =1+2")).toBe('"a =1+2"');
    // Where a reader of ; or tab, or one cutting lines, would start a cell inside the quotes.
    expect(csvField("order;=1+1")).toBe(`"order;'=1+1"`);
    expect(csvField("a\n@x")).toBe(`"a\n'@x"`);
    expect(csvField("x;\t=1")).toBe(`"x;'\t'=1"`);
    expect(csvField("\t=2")).toBe(`"'\t'=2"`);
    // A comma starts a cell only for a reader that lost the quotes at a line break.
    expect(csvField("a, -1")).toBe('"a, -1"');
    expect(csvField("a\nb, -1")).toBe(`"a\nb,' -1"`);
    expect(csvField('{"xs":[1,-2],"n":"a;b"}')).toBe('"{""xs"":[1,-2],""n"":""a;b""}"');

    const hostile = ["=1+1", "order;=1+1", 'q";=1+1', "a\n=1", "a\r\n@x", " ;  -2", "x;\t=1", ";=1", 'a"b;=c', "a\nb, =1", "a\rb\t+1", "ok;fine", "\t=2", "-", "@", "=", "a;;@b"];
    const columns = ["id", ...hostile.map((_, i) => `c${i}`)];
    const row = ["ps_1", ...hostile];
    const text = columns.join(",") + "\n" + row.map(csvField).join(",") + "\n";
    // A CSV library reads every value back; a defused one differs only by the ' marks.
    const marksRemoved = csvRecords(text).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v.replace(/(^|[,;\t\r\n])'(?=[ ]*[=+\-@\t\r])/g, "$1")])));
    expect(marksRemoved).toEqual([Object.fromEntries(columns.map((c, i) => [c, row[i]!]))]);
    expect(csvRecords(text)[0]!.c11).toBe("ok;fine");
    const formulas = misreadCells(text).filter(startsFormula);
    expect(formulas).toEqual([]);
    // The readers are real: the old guard (quote only when needed, defuse only the field's start) fails them.
    const oldField = (v: string) => {
      const s = /^[ ]*[=+\-@\t\r]/.test(v) ? `'${v}` : v;
      return /[",;\t\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
    };
    expect(misreadCells(row.map(oldField).join(",")).filter(startsFormula).length).toBeGreaterThan(0);
  });
});

describe("cookies and users", () => {
  test("HttpOnly, SameSite and Path always; Secure except plain http on loopback", () => {
    expect(loginCookie("dsh_x", false)).toBe("ps_dashboard=dsh_x; Path=/dashboard; HttpOnly; SameSite=Lax; Max-Age=43200");
    // Secure: the __Host- prefix (Path=/, no Domain), so a sibling subdomain cannot plant it.
    expect(loginCookie("dsh_x", true)).toBe("__Host-ps_dashboard=dsh_x; Path=/; HttpOnly; SameSite=Lax; Max-Age=43200; Secure");
    expect(secureCookies(new URL("http://localhost:4000"))).toBe(false);
    expect(secureCookies(new URL("http://127.0.0.1:4000"))).toBe(false);
    expect(secureCookies(new URL("https://pay.example.com"))).toBe(true);
    expect(secureCookies(new URL("http://pay.example.com"))).toBe(true);
    expect(readCookie("a=1; ps_dashboard=dsh_y; b=2", "ps_dashboard")).toBe("dsh_y");
    expect(readCookie(null, "ps_dashboard")).toBeUndefined();
  });
  test("a POST's origin: our own page, or a client that is no browser; never another origin, port or a frame's null", () => {
    const post = (headers: Record<string, string>) => new Request("http://127.0.0.1:4000/dashboard/sign-in", { method: "POST", headers });
    expect(originProblem(post({}))).toBeUndefined();
    expect(originProblem(post({ origin: "http://127.0.0.1:4000", "sec-fetch-site": "same-origin" }))).toBeUndefined();
    expect(originProblem(post({ origin: "https://pay.example.com", host: "pay.example.com" }))).toBeUndefined(); // behind a proxy
    expect(originProblem(post({ origin: "null", "sec-fetch-site": "same-origin" }))).toBeUndefined();
    const foreign: Record<string, string>[] = [
      { origin: "http://127.0.0.1:4001" },
      { origin: "http://127.0.0.1:4001", host: "127.0.0.1:4000" },
      { origin: "https://evil.example" },
      { origin: "null" },
      { origin: "not a url" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "cross-site" },
      { origin: "http://127.0.0.1:4000", "sec-fetch-site": "same-site" },
    ];
    for (const headers of foreign) {
      expect({ headers, problem: originProblem(post(headers)) }).toEqual({ headers, problem: "The request came from another site." });
    }
  });

  test("a flash opens once, for its own session and page, within five minutes, and only unaltered", () => {
    const key = randomBytes(32);
    const set = flashCookie(key, "login-a", "/dashboard/sandbox/settings/api-keys", { secret: { value: "sk_test_secret", label: "ci" } }, false, new Date(1_000_000));
    expect(set).toStartWith("ps_flash=");
    expect(set).toContain("HttpOnly; SameSite=Strict; Max-Age=300");
    expect(set).not.toContain("sk_test_secret");
    const req = (cookie: string) => new Request("http://x/", { headers: { cookie } });
    const value = set.split(";")[0]!;
    const at = new Date(1_000_000 + 60_000);
    expect(readFlash(req(value), key, "login-a", "/dashboard/sandbox/settings/api-keys", false, at)).toEqual({ flash: { notice: undefined, secret: { value: "sk_test_secret", label: "ci" } }, clear: true });
    expect(readFlash(req(value), key, "login-a", "/dashboard/sandbox/settings/webhooks", false, at)).toEqual({ clear: false }); // for another page: kept
    expect(readFlash(req(value), key, "login-b", "/dashboard/sandbox/settings/api-keys", false, at)).toEqual({ clear: true }); // another session
    expect(readFlash(req(value), randomBytes(32), "login-a", "/dashboard/sandbox/settings/api-keys", false, at)).toEqual({ clear: true });
    const mid = Math.floor(value.length / 2);
    const altered = value.slice(0, mid) + (value[mid] === "A" ? "B" : "A") + value.slice(mid + 1);
    expect(readFlash(req(altered), key, "login-a", "/dashboard/sandbox/settings/api-keys", false, at)).toEqual({ clear: true });
    expect(readFlash(req(value), key, "login-a", "/dashboard/sandbox/settings/api-keys", false, new Date(1_000_000 + 301_000))).toEqual({ clear: true });
    expect(readFlash(req("other=1"), key, "login-a", "/dashboard/sandbox/settings/api-keys", false, at)).toEqual({ clear: false });
    expect(clearFlashCookie(true)).toBe("__Host-ps_flash=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure");
  });

  test("emails and passwords", () => {
    expect(normalizeEmail(" Ann@Shop.Example ")).toBe("ann@shop.example");
    expect(normalizeEmail("not an email")).toBeUndefined();
    expect(normalizeEmail("<a>@b.c")).toBeUndefined();
    expect(passwordProblem("short")).toContain("at least 12");
    expect(passwordProblem("long enough password")).toBeUndefined();
  });
});

describe("timeline in plain words", () => {
  const ctx = { amount: "12.34", currency: "USD", decimals: 6, symbol: "TUSD" };
  const at = "2026-01-01T00:00:00.000Z";
  test("says what happened to the money for over-, under- and late payments", () => {
    expect(describeEvent({ sequence: 2, status: "FUNDED", previousStatus: "PENDING", reason: "overpaid", detail: { overpaid: "1500000" }, at }, ctx).text).toContain("1.5 TUSD extra");
    expect(describeEvent({ sequence: 2, status: "ERROR", previousStatus: "PENDING", reason: "underpaid", detail: { shortBy: "340000" }, at }, ctx).text).toContain("0.34 TUSD short");
    const late = describeEvent({ sequence: 3, status: "ERROR", previousStatus: "CANCELED", reason: "paid_after_cancel", detail: { amount: "12340000" }, at }, ctx);
    expect(late.title).toBe("Paid after it ended");
    expect(late.text).toContain("12.34 TUSD");
    expect(late.text).toContain("moved to your settlement address");
  });
  test("token amounts", () => {
    expect(tokenAmount("1234500", 6)).toBe("1.2345");
    expect(tokenAmount("1000000", 6)).toBe("1");
    expect(tokenAmount("x", 6)).toBeUndefined();
  });
});

describe("sandbox tools", () => {
  test("only those the API would accept for the session's status are offered", () => {
    expect(sandboxToolsFor("PENDING")).toEqual(["pay", "expire", "fail-next-sweep", "simulate-error"]);
    expect(sandboxToolsFor("FUNDED")).toEqual(["pay", "fail-next-sweep"]);
    for (const s of ["SUCCEEDED", "CANCELED", "ERROR"]) expect(sandboxToolsFor(s)).toEqual(["pay"]);
  });
});
