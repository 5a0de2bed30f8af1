import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { OutboxMailer, SmtpMailer } from "../../src/accounts/mail";
import { captureLogs } from "../../src/platform/log";
import { tempDir } from "../support/app";
import { decodeQuotedPrintable, makeAuthApp } from "./helpers";

// argon2id hashing is CPU-bound: leave room on a loaded machine
setDefaultTimeout(30_000);

const message = {
  accountId: "0190-acct",
  to: "ann@example.com",
  subject: "Hello there",
  text: `Line one\nhttps://x.test/verify-email?token=${"t".repeat(60)}\n`,
  link: "https://x.test/verify-email?token=…",
};

describe("development outbox", () => {
  test("one RFC 822 file per message under the outbox, owner-readable only; forget removes an account's", async () => {
    const dir = join(tempDir(), "outbox");
    const mail = new OutboxMailer(dir, "Brand Asset API <no-reply@brand.test>");
    await mail.send(message);
    await mail.send({ ...message, accountId: "other" });
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(2);
    const mine = files.find((f) => f.startsWith("0190-acct.")) as string;
    expect(mine).toEndWith(".eml");
    expect(statSync(join(dir, mine)).mode & 0o777).toBe(0o600);
    const text = decodeQuotedPrintable(await Bun.file(join(dir, mine)).text());
    const [head] = text.split(/\r\n\r\n/);
    expect(head).toMatch(/^From: Brand Asset API <no-reply@brand\.test>$/m);
    expect(head).toMatch(/^To: ann@example\.com$/m);
    expect(head).toMatch(/^Subject: Hello there$/m);
    expect(head).toMatch(/^Date: /m);
    expect(head).toMatch(/^Message-ID: <.+>$/m);
    expect(text).toContain(`token=${"t".repeat(60)}`);
    await mail.forget("0190-acct");
    expect(readdirSync(dir)).toEqual(files.filter((f) => f !== mine));
  });
});

describe("SMTP (nodemailer) against a real SMTP server on loopback", () => {
  const received: { from: string; to: string[]; data: string }[] = [];
  let server: SMTPServer;
  let port: number;
  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData(stream, session, done) {
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            data: decodeQuotedPrintable(Buffer.concat(chunks).toString("utf8")),
          });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test("SmtpMailer delivers the message with its envelope", async () => {
    const mail = new SmtpMailer(`smtp://127.0.0.1:${port}`, "no-reply@brand.test");
    await mail.send(message);
    mail.close();
    const got = received.at(-1);
    expect(got?.from).toBe("no-reply@brand.test");
    expect(got?.to).toEqual(["ann@example.com"]);
    expect(got?.data).toMatch(/^Subject: Hello there\r?$/m);
    expect(got?.data).toContain(`token=${"t".repeat(60)}`);
  });

  test("with SMTP_URL, registration mails the verification link built from PUBLIC_URL; no outbox file", async () => {
    const t = await makeAuthApp({
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      PUBLIC_URL: "https://app.brand.test/",
      MAIL_FROM: "accounts@brand.test",
    });
    const before = received.length;
    const reg = await t.register("smtp-user@example.com");
    expect(received.length).toBe(before + 1);
    const got = received.at(-1);
    expect(got?.to).toEqual(["smtp-user@example.com"]);
    expect(got?.from).toBe("accounts@brand.test");
    const m = /https:\/\/app\.brand\.test\/verify-email\?token=([A-Za-z0-9_-]+)/.exec(
      got?.data ?? "",
    );
    expect(m).not.toBeNull();
    const verified = await t.json("/auth/verify-email", { token: m?.[1] });
    expect(verified.status).toBe(200);
    const me = await t.bearer("/auth/me", (await t.login("smtp-user@example.com")).accessToken);
    expect(((await me.json()) as { emailVerified: boolean }).emailVerified).toBe(true);
    expect(existsSync(join(t.deps.config.DATA_DIR, "outbox"))).toBe(false);
    expect(reg.emailVerified).toBe(false);
    await t.close();
  });

  test("an SMTP server that does not answer does not fail registration (the user can resend)", async () => {
    const t = await makeAuthApp({ SMTP_URL: "smtp://127.0.0.1:1" });
    const log = captureLogs();
    try {
      const r = await t.json("/auth/register", {
        email: "later@example.com",
        password: "long enough pw",
      });
      expect(r.status).toBe(201);
      // the failure is logged for the operator (the mail is sent after the answer)
      const failed = () => log.lines.some((l) => l.msg === "could not send e-mail");
      const until = Date.now() + 10_000;
      while (!failed() && Date.now() < until) await Bun.sleep(50);
      expect(failed()).toBe(true);
    } finally {
      log.restore();
      await t.close();
    }
  });
});
