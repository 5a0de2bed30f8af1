import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nodemailer, { type Transporter } from "nodemailer";
import { newId } from "../platform/ids";
import { log } from "../platform/log";

export interface MailMessage {
  /** the account it concerns (outbox files are named by it, so deletion can remove them) */
  accountId: string;
  to: string;
  subject: string;
  text: string;
  /** the action link in the message (logged by the development outbox) */
  link: string;
}

/** Port for outgoing e-mail. */
export interface MailSender {
  readonly kind: "outbox" | "smtp";
  send(message: MailMessage): Promise<void>;
  /** remove every stored copy of the account's messages (account deletion) */
  forget(accountId: string): Promise<void>;
}

/**
 * Development outbox (the default): each message is written as one RFC 822 file
 * DATA_DIR/outbox/<accountId>.<id>.eml (built by nodemailer's stream transport), and a log line
 * gives its link. Deleting the account deletes its files.
 */
export class OutboxMailer implements MailSender {
  readonly kind = "outbox";
  private composer = nodemailer.createTransport({ streamTransport: true, buffer: true });

  constructor(
    readonly dir: string,
    private from: string,
  ) {}

  async send(m: MailMessage): Promise<void> {
    const info = await this.composer.sendMail({
      from: this.from,
      to: m.to,
      subject: m.subject,
      text: m.text,
    });
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = join(this.dir, `${m.accountId}.${newId()}.eml`);
    writeFileSync(file, info.message as Buffer, { mode: 0o600 });
    log("info", "mail written to the development outbox", {
      subject: m.subject,
      file,
      link: m.link,
    });
  }

  async forget(accountId: string): Promise<void> {
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const name of names)
      if (name.startsWith(`${accountId}.`)) rmSync(join(this.dir, name), { force: true });
  }
}

/** SMTP through nodemailer (`SMTP_URL`, e.g. smtps://user:pass@smtp.example.com:465). */
export class SmtpMailer implements MailSender {
  readonly kind = "smtp";
  private transport: Transporter;

  constructor(
    url: string,
    private from: string,
  ) {
    this.transport = nodemailer.createTransport(url);
  }

  async send(m: MailMessage): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: m.to, subject: m.subject, text: m.text });
  }

  /** nothing is stored locally */
  async forget(): Promise<void> {}

  close() {
    this.transport.close();
  }
}
