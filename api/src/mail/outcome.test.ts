import { expect, test } from "bun:test";
import { MAIL_RETRY_SCHEDULE, sendFailureOutcome } from "./outcome.ts";

test("a 5xx answer fails the mail at once; a 4xx or a connection failure is retried", () => {
  expect(sendFailureOutcome(Object.assign(new Error("550 5.1.1 no such user"), { responseCode: 550 }), 1)).toEqual({ state: "failed", error: "550 5.1.1 no such user" });
  const soft = sendFailureOutcome(Object.assign(new Error("try later"), { responseCode: 421 }), 1, 0.5);
  expect(soft).toEqual({ state: "pending", error: "421 try later", delayMs: 30_000 });
  const refused = sendFailureOutcome(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1\nstack"), { code: "ECONNREFUSED" }), 2, 0.5);
  expect(refused).toEqual({ state: "pending", error: "connect ECONNREFUSED 127.0.0.1:1", delayMs: 120_000 });
});

test("after the schedule's last entry the mail is failed, saying how many attempts it had", () => {
  const last = MAIL_RETRY_SCHEDULE.length + 1;
  const r = sendFailureOutcome(new Error("timeout"), last);
  expect(r).toEqual({ state: "failed", error: `timeout (gave up after ${last} attempts)` });
  expect(sendFailureOutcome(new Error("timeout"), last - 1).state).toBe("pending");
});
