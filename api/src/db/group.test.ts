import { describe, expect, test } from "bun:test";
import { Group, type Member } from "./group.ts";
import { DeadlineExceeded, requestScope, type RequestScope } from "./deadline.ts";

/** A send whose batches the test finishes by hand. */
function manualSend<T>() {
  const sent: { batch: Member<T, T>[]; finish: (error?: Error) => void; scopeInside: RequestScope | undefined }[] = [];
  const send = (batch: Member<T, T>[]) =>
    new Promise<void>((resolve, reject) => {
      sent.push({
        batch,
        scopeInside: requestScope.getStore(),
        finish: (error) => {
          if (error) return reject(error);
          for (const m of batch) m.resolve(m.item);
          resolve();
        },
      });
    });
  return { sent, send };
}
const tick = () => new Promise((r) => setTimeout(r, 0));
/** The outcome of a promise, observed from the start (a rejection before the test looks is not "unhandled"). */
const outcome = <T>(p: Promise<T>) => p.then((value) => ({ value }), (error: unknown) => ({ error }));

describe("Group (group commit)", () => {
  test("an idle group sends at once, alone; newcomers wait while batches are out and leave together", async () => {
    const { sent, send } = manualSend<number>();
    const group = new Group(send, { maxBatch: 100, maxInFlight: 1, writes: false });
    const first = group.submit(1);
    await tick();
    expect(sent.map((s) => s.batch.map((m) => m.item))).toEqual([[1]]);
    const later = [2, 3, 4].map((n) => group.submit(n));
    await tick();
    expect(sent.length).toBe(1); // one batch out at most
    sent[0]!.finish();
    expect(await first).toBe(1);
    await tick();
    expect(sent.map((s) => s.batch.map((m) => m.item))).toEqual([[1], [2, 3, 4]]);
    sent[1]!.finish();
    expect(await Promise.all(later)).toEqual([2, 3, 4]);
  });

  test("at most maxBatch per batch and maxInFlight batches out", async () => {
    const { sent, send } = manualSend<number>();
    const group = new Group(send, { maxBatch: 3, maxInFlight: 2, writes: false });
    const all = Array.from({ length: 8 }, (_, i) => group.submit(i));
    await tick();
    expect(sent.map((s) => s.batch.length)).toEqual([3, 3]);
    sent[0]!.finish();
    await tick();
    expect(sent.map((s) => s.batch.length)).toEqual([3, 3, 2]);
    sent[1]!.finish();
    sent[2]!.finish();
    expect(await Promise.all(all)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  test("the next batch leaves before the members of the finished one are answered", async () => {
    const { sent, send } = manualSend<number>();
    const group = new Group(send, { maxBatch: 100, maxInFlight: 1, writes: false });
    const order: string[] = [];
    const first = group.submit(1).then((v) => order.push(`answered ${v} (batches sent: ${sent.length})`));
    await tick();
    const second = group.submit(2);
    await tick();
    sent[0]!.finish();
    await first;
    // Member 1 learnt its outcome only once batch [2] was with send already.
    expect(order).toEqual(["answered 1 (batches sent: 2)"]);
    sent[1]!.finish();
    expect(await second).toBe(2);
  });

  test("a member that send settles along the way is answered then, not when the whole send ends", async () => {
    let finishSecond!: () => void;
    const group = new Group<number, number>(
      async (batch) => {
        batch[0]!.resolve(batch[0]!.item); // as a one-by-one retry answers each create once it is written
        await new Promise<void>((r) => (finishSecond = r));
        batch[1]!.resolve(batch[1]!.item);
      },
      { maxBatch: 10, maxInFlight: 1, writes: false },
    );
    const first = group.submit(1);
    const second = group.submit(2);
    expect(await first).toBe(1); // would hang until finishSecond() if held to the end of send
    finishSecond();
    expect(await second).toBe(2);
  });

  test("a failed batch rejects every member; the group goes on", async () => {
    const { sent, send } = manualSend<number>();
    const group = new Group(send, { maxBatch: 10, maxInFlight: 1, writes: false });
    const a = group.submit(1);
    await tick();
    const b = outcome(group.submit(2));
    const c = outcome(group.submit(3));
    sent[0]!.finish(new Error("database away"));
    await expect(a).rejects.toThrow("database away");
    await tick();
    sent[1]!.finish(new Error("still away"));
    expect(String((await b as { error: unknown }).error)).toContain("still away");
    expect(String((await c as { error: unknown }).error)).toContain("still away");
    const d = group.submit(4);
    await tick();
    sent[2]!.finish();
    expect(await d).toBe(4);
  });

  test("writes: a member whose request was answered already is left out; the others are committing until settled", async () => {
    const { sent, send } = manualSend<string>();
    const group = new Group(send, { maxBatch: 10, maxInFlight: 1, writes: true });
    const blocker = group.submit("blocker");
    await tick();
    const late: RequestScope = { expired: false, committing: 0 };
    const onTime: RequestScope = { expired: false, committing: 0 };
    const lateOne = outcome(requestScope.run(late, () => group.submit("late")));
    const onTimeOne = requestScope.run(onTime, () => group.submit("on time"));
    // The first request's deadline passes while it waits behind the batch that is out.
    late.expired = true;
    sent[0]!.finish();
    await blocker;
    await tick();
    expect((await lateOne as { error: unknown }).error).toBeInstanceOf(DeadlineExceeded);
    expect(sent[1]!.batch.map((m) => m.item)).toEqual(["on time"]);
    expect(onTime.committing).toBe(1); // the HTTP layer waits for this outcome rather than answer 503 over it
    expect(late.committing).toBe(0);
    // The batch runs outside every member's request scope.
    expect(sent[1]!.scopeInside).toBeUndefined();
    sent[1]!.finish();
    expect(await onTimeOne).toBe("on time");
    expect(onTime.committing).toBe(0);
    // A request already answered cannot even join.
    await expect(requestScope.run(late, () => group.submit("too late"))).rejects.toBeInstanceOf(DeadlineExceeded);
    expect(sent.length).toBe(2);
  });

  test("reads are not fenced: a lookup of an expired request still runs", async () => {
    const { sent, send } = manualSend<string>();
    const group = new Group(send, { maxBatch: 10, maxInFlight: 1, writes: false });
    const scope: RequestScope = { expired: true, committing: 0 };
    const p = requestScope.run(scope, () => group.submit("read"));
    await tick();
    sent[0]!.finish();
    expect(await p).toBe("read");
    expect(scope.committing).toBe(0);
  });
});
