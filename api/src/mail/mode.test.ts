import { expect, test } from "bun:test";
import { RedactedSecret } from "../config.ts";
import { mailModeLine, mailModeOf, smtpWhere } from "./mode.ts";

test("SMTP when set; else the catcher on sandbox-only services, off beside a production network", () => {
  const url = new RedactedSecret("smtps://user:hunter2@mail.example.com:465");
  expect(mailModeOf({ smtpUrl: url }, true)).toBe("smtp");
  expect(mailModeOf({ smtpUrl: url }, false)).toBe("smtp");
  expect(mailModeOf({ smtpUrl: undefined }, false)).toBe("catcher");
  expect(mailModeOf({ smtpUrl: undefined }, true)).toBe("off");
});

test("the boot line names the server without its credentials, and says plainly when mail is off", () => {
  const where = smtpWhere("smtps://user:hunter2@mail.example.com:465");
  expect(where).toBe("smtps://mail.example.com:465");
  expect(mailModeLine("smtp", where)).not.toContain("hunter2");
  expect(mailModeLine("off", "")).toContain("SERVICE_SMTP_URL");
});
