import { conflict, limitReached, unauthenticated, unusable } from "../platform/domain-errors";
import { sha256Hex } from "../platform/hash";
import { newId } from "../platform/ids";
import { log } from "../platform/log";
import type { PasswordHasher } from "../platform/password";
import type { RatePolicy } from "../quota/limits";
import type { Principal } from "../quota/principal";
import type { BackoffPolicy, RateLimiter } from "../quota/rate-limit";
import type { AccessTokens } from "./jwt";
import { randomToken } from "./jwt";
import type { MailSender } from "./mail";
import type { Account, AccountEvent } from "./model";
import { emailIndex, newDataKey, seal, unseal } from "./pii";
import type { AccountService } from "./service";
import type { AccountStore, TokenRecord, TokenStore } from "./store/port";

const HOUR_MS = 3_600_000;
export const TOKEN_TTL_MS = {
  refresh: 30 * 24 * HOUR_MS,
  verify: 24 * HOUR_MS,
  reset: HOUR_MS,
} as const;

/**
 * Failed logins of one address (account, known or not) from one client IP: 5 free in a
 * 15-minute window, then growing delays (1 s, 2 s, 4 s... at most 15 minutes) for that pair
 * only. Nobody else is slowed down: the account is never locked for everyone.
 */
export const LOGIN_PAIR: BackoffPolicy = {
  name: "login-pair",
  free: 5,
  windowSeconds: 900,
  maxDelaySeconds: 900,
};

/** Failed logins from one client IP, whatever the addresses: 20 free, then growing delays. */
export const LOGIN_CLIENT: BackoffPolicy = {
  name: "login-ip",
  free: 20,
  windowSeconds: 900,
  maxDelaySeconds: 900,
};

/** Registrations: at most 10 per client IP per hour. */
export const REGISTRATIONS: RatePolicy = {
  name: "register",
  limit: 10,
  windowSeconds: 3600,
  label: "POST /auth/register",
};

export interface TokenPair {
  accessToken: string;
  tokenType: "Bearer";
  expiresIn: number;
  refreshToken: string;
}

export interface AuthServiceDeps {
  accounts: AccountService;
  store: AccountStore;
  tokens: TokenStore;
  access: AccessTokens;
  passwords: PasswordHasher;
  mail: MailSender;
  limiter: RateLimiter;
  /** base of the links in e-mails (PUBLIC_URL) */
  publicUrl: string;
  /** UPGRADE_URL, named in 429 answers */
  upgradeUrl: string;
  now?: () => number;
}

/**
 * Self-service accounts: registration, login with access + refresh tokens, e-mail verification,
 * password reset, deletion. Personal data (address, password hash) is sealed per account
 * (pii.ts); the address is found through its HMAC index.
 */
export class AuthService {
  private now: () => number;
  private indexSecret: Promise<string> | null = null;
  /** compared against when the address is unknown, so both failures take about as long */
  private dummyHash: Promise<string> | null = null;
  /** work started after answering (`later`) that has not finished */
  private pending = new Set<Promise<unknown>>();

  constructor(private d: AuthServiceDeps) {
    this.now = d.now ?? Date.now;
  }

  private async index(email: string) {
    this.indexSecret ??= this.d.store.serverSecret("email-index").catch((err) => {
      this.indexSecret = null; // the store did not answer: ask again next time
      throw err;
    });
    return emailIndex(await this.indexSecret, email);
  }

  async register(email: string, password: string) {
    const accountId = newId();
    const key = newDataKey();
    const stored = await this.d.store.putDataKey({
      accountId,
      key,
      emailIndex: await this.index(email),
    });
    if (!stored)
      throw conflict("email_taken", "An account with this e-mail address already exists.");
    const pii = {
      email: await seal(key, accountId, email.trim()),
      passwordHash: await seal(key, accountId, await this.d.passwords.hash(password)),
    };
    let issued: Awaited<ReturnType<AccountService["createAccountWithKey"]>>;
    try {
      issued = await this.d.accounts.createAccountWithKey({ tier: "free", accountId, pii });
    } catch (err) {
      await this.d.store.deleteDataKey(accountId);
      throw err;
    }
    await this.sendVerification(accountId, email.trim());
    return {
      accountId,
      email: email.trim(),
      tier: issued.tier,
      emailVerified: false,
      keyId: issued.keyId,
      apiKey: issued.apiKey,
    };
  }

  /**
   * Throttled per (address, client IP) and per client IP with growing delays (LOGIN_PAIR,
   * LOGIN_CLIENT): an attempt before its delay has passed is refused unchecked (429), whatever
   * the password; the same address from elsewhere is not slowed down.
   */
  async login(email: string, password: string, ip: string): Promise<TokenPair> {
    const index = await this.index(email);
    const throttles: [BackoffPolicy, string, string][] = [
      [LOGIN_PAIR, `${index}:${ip}`, "for this address from your network address"],
      [LOGIN_CLIENT, ip, "from your network address"],
    ];
    for (const [policy, identity, whose] of throttles) {
      const wait = Math.ceil((await this.d.limiter.waitLeft(policy, identity)) / 1000);
      if (wait > 0)
        throw limitReached(
          `Too many failed logins ${whose}. Retry in ${wait} seconds.`,
          wait,
          this.d.upgradeUrl,
        );
    }
    const account = await this.accountByEmail(email, index);
    const ok = await this.checkPassword(account, password);
    if (!account || !ok) {
      for (const [policy, identity] of throttles) await this.d.limiter.failed(policy, identity);
      throw unauthenticated("invalid_credentials", "Wrong e-mail address or password.");
    }
    return this.issuePair(account, newId());
  }

  async refresh(refreshToken: string): Promise<TokenPair> {
    const hash = sha256Hex(refreshToken);
    const record = await this.d.tokens.get(hash);
    const now = this.now();
    const refused = () =>
      unauthenticated("invalid_token", "The refresh token is invalid, expired or revoked.");
    if (record?.kind !== "refresh" || !record.family) throw refused();
    if (record.usedAt !== null) {
      // a rotated token came back: someone holds a copy, so the whole session ends
      await this.d.tokens.revokeFamily(record.family, now);
      log("warn", "refresh token reused; family revoked", { accountId: record.accountId });
      throw refused();
    }
    if (record.revokedAt !== null || record.expiresAt <= now) throw refused();
    const account = await this.d.accounts.getAccount(record.accountId);
    if (!account || !this.tokenStillValid(account, record.createdAt)) throw refused();
    if (!(await this.d.tokens.use(hash, now))) {
      await this.d.tokens.revokeFamily(record.family, now);
      throw refused();
    }
    return this.issuePair(account, record.family);
  }

  /** End the session of a refresh token (its whole family); unknown tokens are ignored. */
  async logout(refreshToken: string): Promise<void> {
    const record = await this.d.tokens.get(sha256Hex(refreshToken));
    if (record?.kind === "refresh" && record.family)
      await this.d.tokens.revokeFamily(record.family, this.now());
  }

  async verifyEmail(token: string): Promise<void> {
    const record = await this.useToken(token, "verify");
    const account = await this.d.accounts.getAccount(record.accountId);
    if (!account || account.deletedAt) throw invalidToken();
    if (!account.emailVerified)
      await this.append(account.id, [{ type: "email.verified", data: {} }]);
  }

  /**
   * Runs `work` after the current request is answered: the answer then takes the same time
   * whether or not the work finds anything to do (an address that is registered or not). A
   * failure is logged; `settled()` waits for the work still running.
   */
  private later(what: string, work: () => Promise<void>): void {
    const task = new Promise((resolve) => setTimeout(resolve, 0))
      .then(work)
      .catch((err) =>
        log("error", `${what} failed`, { error: err instanceof Error ? err.message : String(err) }),
      )
      .finally(() => this.pending.delete(task));
    this.pending.add(task);
  }

  /** Resolves once the work started by `later` is done (shutdown, tests). */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending);
  }

  /** POST /auth/resend-verification: resendVerification, after the answer (see `later`). */
  requestVerificationMail(email: string): void {
    this.later("verification mail", () => this.resendVerification(email));
  }

  /** POST /auth/forgot-password: forgotPassword, after the answer (see `later`). */
  requestPasswordReset(email: string): void {
    this.later("password reset mail", () => this.forgotPassword(email));
  }

  /** Sends a new verification link when the address belongs to an unverified account. */
  async resendVerification(email: string): Promise<void> {
    const account = await this.accountByEmail(email);
    if (account && !account.emailVerified) {
      const address = await this.d.accounts.emailOf(account);
      if (address) await this.sendVerification(account.id, address);
    }
  }

  /** Sends a reset link when the address belongs to an account. */
  async forgotPassword(email: string): Promise<void> {
    const account = await this.accountByEmail(email);
    const address = account ? await this.d.accounts.emailOf(account) : null;
    if (!account || !address) return;
    const token = await this.newToken(account.id, "reset");
    const link = `${this.d.publicUrl}/reset-password?token=${encodeURIComponent(token)}`;
    await this.sendMail({
      accountId: account.id,
      to: address,
      subject: "Reset your Brand Asset API password",
      text: `Someone asked to reset the password of your Brand Asset API account.\n\nSet a new password (the link works once, for 1 hour):\n${link}\n\nIf it was not you, ignore this message.\n`,
      link,
    });
  }

  /** Set a new password with a reset token; every refresh token of the account dies. */
  async resetPassword(token: string, password: string): Promise<void> {
    const record = await this.useToken(token, "reset");
    const account = await this.d.accounts.getAccount(record.accountId);
    const dataKey = await this.d.store.getDataKey(record.accountId);
    if (!account || account.deletedAt || !dataKey) throw invalidToken();
    const passwordHash = await seal(dataKey.key, account.id, await this.d.passwords.hash(password));
    await this.append(account.id, [
      { type: "password.changed", data: { passwordHash } },
      { type: "tokens.revoked", data: { reason: "password_reset" } },
    ]);
  }

  /** The caller's account as GET /auth/me shows it (never a key or a hash). */
  async me(accountId: string) {
    const account = await this.d.accounts.getAccount(accountId);
    if (!account || account.deletedAt) return null;
    return {
      accountId: account.id,
      email: await this.d.accounts.emailOf(account),
      tier: account.tier,
      emailVerified: account.emailVerified,
      createdAt: account.createdAt,
      keys: account.keys
        .filter((k) => !k.revokedAt)
        .map((k) => ({ keyId: k.id, prefix: k.prefix, createdAt: k.createdAt })),
    };
  }

  /**
   * Delete the account after checking its password: keys and tokens revoked, the data key and
   * e-mail index destroyed (the sealed personal data in the log becomes unreadable), outbox copies
   * removed. Usage history stays under the account id.
   */
  async deleteAccount(accountId: string, password: string): Promise<void> {
    const account = await this.d.accounts.getAccount(accountId);
    if (!account || account.deletedAt || !(await this.checkPassword(account, password)))
      throw unauthenticated("invalid_credentials", "Wrong password.");
    await this.append(accountId, [{ type: "account.deleted", data: {} }]);
    await this.d.store.deleteDataKey(accountId);
    await this.d.tokens.removeAccount(accountId);
    await this.d.mail.forget(accountId);
    this.d.accounts.forget(accountId);
  }

  /** The principal of a valid access token whose account still exists; else null. */
  async verifyBearer(token: string): Promise<Principal | null> {
    const claims = await this.d.access.verify(token);
    if (!claims) return null;
    const account = await this.d.accounts.getAccount(claims.accountId);
    // tokens.revoked is to the millisecond, iat to the second: a token from the same second stays
    if (!account || !this.tokenStillValid(account, claims.iat * 1000 + 999)) return null;
    return { accountId: account.id, keyId: null, tier: account.tier, limits: account.limits };
  }

  private tokenStillValid(account: Account, issuedAtMs: number): boolean {
    if (account.deletedAt) return false;
    return !account.tokensRevokedAt || issuedAtMs >= Date.parse(account.tokensRevokedAt);
  }

  private async issuePair(account: Account, family: string): Promise<TokenPair> {
    const refreshToken = randomToken("brt_");
    const now = this.now();
    await this.d.tokens.put({
      hash: sha256Hex(refreshToken),
      kind: "refresh",
      accountId: account.id,
      family,
      createdAt: now,
      expiresAt: now + TOKEN_TTL_MS.refresh,
      usedAt: null,
      revokedAt: null,
    });
    return {
      accessToken: await this.d.access.sign(account.id, account.tier),
      tokenType: "Bearer",
      expiresIn: this.d.access.ttlSeconds,
      refreshToken,
    };
  }

  private async newToken(accountId: string, kind: "verify" | "reset"): Promise<string> {
    const token = randomToken(kind === "verify" ? "bvt_" : "bpr_");
    const now = this.now();
    await this.d.tokens.put({
      hash: sha256Hex(token),
      kind,
      accountId,
      family: null,
      createdAt: now,
      expiresAt: now + TOKEN_TTL_MS[kind],
      usedAt: null,
      revokedAt: null,
    });
    return token;
  }

  /** Use a single-use token of `kind`: unknown, used, expired or of another kind = invalid_token. */
  private async useToken(token: string, kind: "verify" | "reset"): Promise<TokenRecord> {
    const hash = sha256Hex(token);
    const record = await this.d.tokens.get(hash);
    const now = this.now();
    if (!record || record.kind !== kind || record.expiresAt <= now) throw invalidToken();
    if (!(await this.d.tokens.use(hash, now))) throw invalidToken();
    return record;
  }

  private async sendVerification(accountId: string, address: string) {
    const token = await this.newToken(accountId, "verify");
    const link = `${this.d.publicUrl}/verify-email?token=${encodeURIComponent(token)}`;
    await this.sendMail({
      accountId,
      to: address,
      subject: "Confirm your e-mail address for Brand Asset API",
      text: `Welcome to Brand Asset API.\n\nConfirm your e-mail address (the link works once, for 24 hours):\n${link}\n`,
      link,
    });
  }

  /** A mail that cannot be sent is logged, not fatal: the user can ask again. */
  private async sendMail(m: Parameters<MailSender["send"]>[0]) {
    try {
      await this.d.mail.send(m);
    } catch (err) {
      log("error", "could not send e-mail", {
        accountId: m.accountId,
        subject: m.subject,
        reason: (err as Error).message,
      });
    }
  }

  private async accountByEmail(email: string, index?: string): Promise<Account | null> {
    const id = await this.d.store.findByEmailIndex(index ?? (await this.index(email)));
    const account = id ? await this.d.accounts.getAccount(id) : null;
    return account && !account.deletedAt && account.pii ? account : null;
  }

  /** Checks the password (an unknown account costs the same hashing work, then false). */
  private async checkPassword(account: Account | null, password: string): Promise<boolean> {
    const dataKey = account ? await this.d.store.getDataKey(account.id) : null;
    if (!account || !dataKey || !account.pii?.passwordHash) {
      await this.d.passwords.verify(password, await this.dummy());
      return false;
    }
    const phc = await unseal(dataKey.key, account.id, account.pii.passwordHash);
    return this.d.passwords.verify(password, phc);
  }

  private dummy(): Promise<string> {
    this.dummyHash ??= this.d.passwords.hash(randomToken(""));
    return this.dummyHash;
  }

  private async append(
    accountId: string,
    events: Omit<AccountEvent, "id" | "accountId" | "ts">[],
  ): Promise<void> {
    const ts = new Date(this.now()).toISOString();
    await this.d.store.append(
      events.map((e) => ({ ...e, id: newId(), accountId, ts }) as AccountEvent),
    );
  }
}

const invalidToken = () =>
  unusable("invalid_token", "The token is invalid, already used or expired.");
