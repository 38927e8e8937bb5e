/**
 * The local mail catcher: a real SMTP server in the process (smtp-server), on 127.0.0.1 only,
 * that keeps every mail it receives as an .eml file under its folder. `bun run dev` and the tests
 * send to it through the same SMTP path production uses, so what reaches a person is what the
 * tests parse. No authentication and no TLS: it listens on loopback and accepts no relay beyond it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";

/** Largest mail it keeps (ours are a few kB). */
const MAX_BYTES = 1024 * 1024;

export interface MailCatcher {
  port: number;
  dir: string;
  /** smtp://127.0.0.1:<port> */
  url: string;
  stop(): Promise<void>;
}

export async function startMailCatcher(dir: string, port = 0): Promise<MailCatcher> {
  let n = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    size: MAX_BYTES,
    banner: "Paysession local mail catcher",
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("data", (c: Buffer) => {
        size += c.length;
        if (size <= MAX_BYTES) chunks.push(c);
      });
      stream.on("end", () => {
        if (stream.sizeExceeded) return callback(Object.assign(new Error("Message too large"), { responseCode: 552 }));
        // Sortable names: the time, then a counter for mails of the same millisecond.
        const name = `${new Date().toISOString().replace(/[:.]/g, "-")}-${String(++n).padStart(4, "0")}-${session.id}.eml`;
        try {
          // Made with the first mail: a service that sends none leaves no folder behind.
          mkdirSync(dir, { recursive: true, mode: 0o700 });
          writeFileSync(join(dir, name), Buffer.concat(chunks), { mode: 0o600 });
          callback();
        } catch (e) {
          callback(Object.assign(new Error(`cannot keep the mail: ${(e as Error).message}`), { responseCode: 451 }));
        }
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", () => {}); // a client's broken connection is not the service's problem
  const bound = (server.server.address() as { port: number }).port;
  return {
    port: bound,
    dir,
    url: `smtp://127.0.0.1:${bound}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
