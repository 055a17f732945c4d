/**
 * Users, their accounts and their API keys.
 *
 * Invariants:
 * - A key belongs to exactly one user and acts on that user's accounts only; its default
 *   account (the one envelope methods act on) is one of them.
 * - A maker key carries a desk name. A desk name belongs to one user: the first key that carries
 *   it makes it that user's, for good (disabled keys included, since the desk's quotes and RFQs
 *   outlive the key that placed them). More keys of that user may carry it (rotation: create the
 *   new key, then disable the old one); a key of any other user may not (`DeskTakenError`).
 * - Secrets leave the store only through `findKey`/`createApiKey`; at rest they are sealed by
 *   the `SecretBox` (AES-256-GCM).
 * - Account ids are allocated here; the engine learns of them through CreateAccount commands.
 */
import { randomBytes } from 'node:crypto';

export type Role = 'trade' | 'taker' | 'maker';
export const ROLES: readonly Role[] = ['trade', 'taker', 'maker'];

export interface RateLimitOverride {
  readonly matching?: { readonly perSecond: number; readonly burst: number };
  readonly nonMatching?: { readonly perSecond: number; readonly burst: number };
}

export interface UserRecord {
  readonly id: number;
  readonly name: string;
  readonly createdAt: number;
}

export interface AccountRecord {
  readonly id: number;
  readonly userId: number;
  readonly label: string;
  readonly createdAt: number;
}

export interface ApiKeyRecord {
  readonly apiKey: string;
  readonly userId: number;
  readonly roles: readonly Role[];
  readonly deskName: string | null;
  readonly defaultAccountId: number;
  readonly rateLimits: RateLimitOverride | null;
  readonly createdAt: number;
  readonly disabled: boolean;
}

export interface NewApiKey {
  readonly userId: number;
  readonly roles: readonly Role[];
  readonly deskName?: string | null;
  /** Defaults to the user's first account. */
  readonly defaultAccountId?: number;
  readonly rateLimits?: RateLimitOverride | null;
}

export interface KeyWithSecret {
  readonly record: ApiKeyRecord;
  readonly apiSecret: string;
}

export interface KeyStore {
  isEmpty(): boolean;
  createUser(name: string, now: number): UserRecord;
  createAccount(userId: number, label: string, now: number): AccountRecord;
  createApiKey(input: NewApiKey, now: number): KeyWithSecret;
  findKey(apiKey: string): KeyWithSecret | undefined;
  disableKey(apiKey: string): boolean;
  getUser(userId: number): UserRecord | undefined;
  listUsers(): UserRecord[];
  accountsOf(userId: number): AccountRecord[];
  getAccount(accountId: number): AccountRecord | undefined;
  listKeys(userId?: number): ApiKeyRecord[];
  close(): void;
}

/**
 * A new key names a desk that belongs to another user, or one that differs from such a desk only
 * in letter case (`existing`, the owner's spelling): a taker could not tell them apart. Names the
 * desk and its owner, no secret.
 */
export class DeskTakenError extends Error {
  constructor(
    readonly deskName: string,
    readonly ownerUserId: number,
    ownerName: string | null,
    readonly existing: string = deskName,
  ) {
    const owner = `user ${ownerUserId}${ownerName === null ? '' : ` (${ownerName})`}`;
    super(
      `${existing === deskName ? `deskName '${deskName}' belongs to ${owner}` : `deskName '${deskName}' is the desk '${existing}' of ${owner} but for letter case`}: a desk stays with the user whose maker keys carry it (that user's new keys may reuse it, e.g. to replace a key); choose another desk name`,
    );
    this.name = 'DeskTakenError';
  }
}

export function newApiKeyId(): string {
  return `k_${randomBytes(10).toString('hex')}`;
}

export function newApiSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Longest desk or user name, as for labels. */
export const MAX_NAME_LENGTH = 64;

// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * What is wrong with a desk or user name, or null: free text shown to other users and written to
 * the stores, held to the rules of labels (1 to 64 characters, no control characters) and with no
 * space at either end (` MAKER1` would pass for `MAKER1`).
 */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters`;
  if (CONTROL.test(name)) return 'must not contain control characters';
  if (name.trim() !== name) return 'must not start or end with a space';
  return null;
}

/** A desk name as compared for ownership: letter case (and compatibility forms) ignored. */
export function deskFold(name: string): string {
  return name.normalize('NFKC').toLowerCase();
}

/** Checks a new key's shape against its owner; throws an Error naming the problem. */
export function checkNewKey(input: NewApiKey, accounts: readonly AccountRecord[]): number {
  if (input.roles.length === 0) throw new Error('a key needs at least one role');
  for (const role of input.roles) if (!ROLES.includes(role)) throw new Error(`unknown role '${role}'`);
  const twice = input.roles.find((role, i) => input.roles.indexOf(role) !== i);
  if (twice !== undefined) throw new Error(`role '${twice}' is listed twice`);
  const isMaker = input.roles.includes('maker');
  if (isMaker && !input.deskName) throw new Error('a maker key needs a desk name');
  if (!isMaker && input.deskName) throw new Error('only maker keys carry a desk name');
  const deskProblem = input.deskName ? nameProblem(input.deskName) : null;
  if (deskProblem !== null) throw new Error(`deskName ${deskProblem}`);
  if (accounts.length === 0) throw new Error(`user ${input.userId} has no account`);
  const defaultAccountId = input.defaultAccountId ?? accounts[0]!.id;
  if (!accounts.some((account) => account.id === defaultAccountId)) {
    throw new Error(`account ${defaultAccountId} does not belong to user ${input.userId}`);
  }
  return defaultAccountId;
}
