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
  /**
   * How logs and the credit ledger name the account: the accounts file's `id`, else one derived from the
   * token (`account-` and 12 hexadecimal digits of a digest), so that usage restored after a restart stays
   * with its account however the file is reordered. Never the token.
   */
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
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'an id is 1 to 64 letters, digits, ".", "_" or "-"')
    .optional(),
  plan: z.enum(['free', 'trial', 'starter', 'trader', 'quant', 'prime']),
  userType: z.enum(['nonpro', 'pro', 'unknown']).default('nonpro'),
  opra: z.boolean().default(false),
  credits: z.object({ limit: z.number().int().nonnegative(), period: z.enum(['day', 'minute']) }).optional(),
});

const fileSchema = z.record(z.string().min(1), accountSchema);

/** Tokens and their accounts: found by the token's digest in one lookup, confirmed in constant time. */
export class AccountBook {
  /** By the token's SHA-256 in hexadecimal; `digest` holds the same 64 characters as bytes. */
  private readonly byDigest = new Map<string, { digest: Buffer; account: Account }>();

  constructor(
    accounts: Readonly<
      Record<string, Omit<Account, 'id' | 'credits'> & { id?: string | undefined; credits?: CreditWindow }>
    >,
  ) {
    const ids = new Set<string>();
    for (const [token, a] of Object.entries(accounts)) {
      const d = digest(token);
      const id = a.id ?? idOfDigest(d);
      if (ids.has(id)) {
        throw new UsageError(
          `two accounts are named ${id}: give one of them an "id" of its own (ids name accounts in logs and the credit ledger).`,
        );
      }
      ids.add(id);
      this.byDigest.set(d, {
        digest: Buffer.from(d, 'latin1'),
        account: {
          id,
          plan: a.plan,
          userType: a.userType,
          opra: a.opra,
          credits: a.credits ?? PLAN_WINDOWS[a.plan],
        },
      });
    }
  }

  /** How many accounts the book holds. */
  get size(): number {
    return this.byDigest.size;
  }

  /**
   * Reads an accounts file: JSON `{ "<token>": { plan, userType, opra, credits? } }`, with or without a
   * byte-order mark. A token given twice is refused naming its lines; no message ever shows a token.
   */
  static async load(file: string): Promise<AccountBook> {
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (cause) {
      throw new UsageError(`cannot read the accounts file ${file}: ${(cause as Error).message}`, { cause });
    }
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      // V8's message may quote the text around the fault, a token perhaps: say only where it is.
      const at = /position (\d+)/.exec((cause as Error).message)?.[1];
      const where = at === undefined ? '' : ` at line ${lineAt(text, Number(at))}`;
      throw new UsageError(`accounts file ${file} is not valid JSON${where}.`);
    }
    const keys = topLevelKeys(text);
    const seen = new Map<string, number>();
    for (const { key, line } of keys) {
      const first = seen.get(key);
      if (first !== undefined) {
        throw new UsageError(
          `accounts file ${file} line ${line}: this token is also given on line ${first}; each token names one account.`,
        );
      }
      seen.set(key, line);
    }
    const parsed = fileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const [token, ...rest] = issue.path.map(String);
      const line = token === undefined ? undefined : seen.get(token);
      const where = line === undefined ? '' : ` line ${line}`;
      const field = rest.length === 0 ? '' : ` ${rest.join('.')}:`;
      throw new UsageError(`accounts file ${file}${where}:${field} ${issue.message}`);
    }
    try {
      return new AccountBook(parsed.data as never);
    } catch (error) {
      if (error instanceof UsageError) throw new UsageError(`accounts file ${file}: ${error.message}`);
      throw error;
    }
  }

  /**
   * The account of a token, or undefined: one lookup by digest, confirmed in constant time. Nothing is
   * allocated outside the young generation (a Buffer per lookup made V8 collect the whole heap, every
   * account included, so often that a lookup among 200,000 accounts took 2.5 times one among 1).
   */
  find(token: string): Account | undefined {
    const probe = digest(token);
    const entry = this.byDigest.get(probe);
    if (entry === undefined) return undefined;
    SCRATCH.write(probe, 'latin1');
    return timingSafeEqual(entry.digest, SCRATCH) ? entry.account : undefined;
  }
}

/** Where a probe's digest is compared from (64 hexadecimal characters). */
const SCRATCH = Buffer.alloc(64);

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The id of an account the file gives none: from the token, so that it does not change when the file is
 * reordered; 48 bits of its digest, which is kept in memory only.
 */
export function accountId(token: string): string {
  return idOfDigest(digest(token));
}

const idOfDigest = (hex: string) => `account-${hex.slice(-12)}`;

/** The 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The keys of a JSON object text's top level, each with its line (the text is valid JSON). */
function topLevelKeys(text: string): { key: string; line: number }[] {
  const keys: { key: string; line: number }[] = [];
  let depth = 0;
  let line = 1;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') line++;
    else if (c === '{' || c === '[') {
      depth++;
      expectKey = depth === 1 && c === '{';
    } else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 1) expectKey = true;
    else if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (expectKey) {
        keys.push({ key: JSON.parse(text.slice(i, j + 1)) as string, line });
        expectKey = false;
      }
      i = j;
    }
  }
  return keys;
}
