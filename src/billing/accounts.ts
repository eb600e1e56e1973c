/**
 * Accounts: who a token is, what plan and entitlements it has, and its credit window (semantics §6).
 * Without an accounts file every request acts for the default local account: a paid, non-professional
 * account with OPRA and unlimited credits. Token comparison is constant-time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { UsageError } from '../errors.js';

export type Plan = 'free' | 'trial' | 'starter' | 'trader' | 'quant' | 'prime';
export type UserType = 'nonpro' | 'pro' | 'unknown';

/** A credit window: `limit` credits per day (reset 09:30 ET) or per minute. */
export type CreditWindow = { readonly limit: number; readonly period: 'day' | 'minute' };

export type Account = {
  readonly id: string;
  readonly plan: Plan;
  readonly userType: UserType;
  readonly opra: boolean;
  readonly credits: CreditWindow;
};

/** The plans' windows (api-reference §8); an accounts file may override them per account. */
export const PLAN_WINDOWS: Record<Plan, CreditWindow> = {
  free: { limit: 100, period: 'day' },
  trial: { limit: 100, period: 'day' },
  starter: { limit: 10_000, period: 'day' },
  trader: { limit: 100_000, period: 'day' },
  quant: { limit: 10_000, period: 'minute' },
  prime: { limit: 100_000, period: 'minute' },
};

/** The account every request acts for when no accounts file is configured. */
export const LOCAL_ACCOUNT: Account = {
  id: 'local',
  plan: 'prime',
  userType: 'nonpro',
  opra: true,
  credits: { limit: 1_000_000_000, period: 'day' },
};

/** Whether the plan may choose a mode other than `historical`. */
export function isPaid(plan: Plan): boolean {
  return plan !== 'free' && plan !== 'trial';
}

const accountSchema = z.object({
  plan: z.enum(['free', 'trial', 'starter', 'trader', 'quant', 'prime']),
  userType: z.enum(['nonpro', 'pro', 'unknown']).default('nonpro'),
  opra: z.boolean().default(false),
  credits: z.object({ limit: z.number().int().nonnegative(), period: z.enum(['day', 'minute']) }).optional(),
});

const fileSchema = z.record(z.string().min(1), accountSchema);

/** Tokens and their accounts, compared in constant time. */
export class AccountBook {
  private readonly entries: { digest: Buffer; account: Account }[];

  constructor(
    accounts: Readonly<Record<string, Omit<Account, 'id' | 'credits'> & { credits?: CreditWindow }>>,
  ) {
    this.entries = Object.entries(accounts).map(([token, a], i) => ({
      digest: digest(token),
      account: {
        id: `account-${i + 1}`,
        plan: a.plan,
        userType: a.userType,
        opra: a.opra,
        credits: a.credits ?? PLAN_WINDOWS[a.plan],
      },
    }));
  }

  /** Reads an accounts file: JSON `{ "<token>": { plan, userType, opra, credits? } }`. */
  static async load(file: string): Promise<AccountBook> {
    let json: unknown;
    try {
      json = JSON.parse(await fs.readFile(file, 'utf8'));
    } catch (cause) {
      throw new UsageError(`cannot read the accounts file ${file}: ${(cause as Error).message}`, { cause });
    }
    const parsed = fileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UsageError(`accounts file ${file}: ${issue.path.join('.')}: ${issue.message}`);
    }
    return new AccountBook(parsed.data as never);
  }

  /** The account of a token, or undefined; every entry is compared so timing reveals nothing. */
  find(token: string): Account | undefined {
    const probe = digest(token);
    let found: Account | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, probe) && found === undefined) found = entry.account;
    }
    return found;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
