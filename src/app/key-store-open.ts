/**
 * Opening the API key store at the service's start: as `openKeyStore` (src/api/auth/open-key-store.ts)
 * does for the CLI and the gateway, with each failure named by what the operator sets: a damaged
 * `keys.db` by its path, an unusable encryption key by its setting; and the stored secrets checked
 * to open with that key.
 */
import { join } from 'node:path';
import { KEYS_FILE } from '../api/auth/open-key-store.ts';
import { SecretBox } from '../api/auth/secret-box.ts';
import { SecretsKeyMismatchError, SqliteKeyStore } from '../api/auth/sqlite-key-store.ts';
import type { Config } from './config.ts';

/**
 * A different encryption key than the one the stored API secrets were sealed with opens none of
 * them: refused at start, naming the setting, rather than answering every signed request with
 * `internal_error`.
 */
export function assertSecretsOpen(keyStore: SqliteKeyStore): void {
  const first = keyStore.listKeys()[0];
  if (first === undefined) return;
  try {
    keyStore.findKey(first.apiKey);
  } catch {
    throw new Error(
      'the stored API secrets cannot be opened with this encryption key: set SECRET_ENCRYPTION_KEY (or DATA_DIR/secret.key) to the key they were sealed with',
    );
  }
}

/** The key store, its encryption key checked; a damaged `keys.db` is named as such. */
export function openServiceKeyStore(config: Readonly<Config>): SqliteKeyStore {
  const secrets = loadSecrets(config);
  try {
    return new SqliteKeyStore(join(config.dataDir, KEYS_FILE), secrets);
  } catch (error) {
    if (error instanceof SecretsKeyMismatchError) throw error;
    throw keysFileError(config, error);
  }
}

function keysFileError(config: Readonly<Config>, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`DATA_DIR/${KEYS_FILE} (${join(config.dataDir, KEYS_FILE)}): ${message}`, {
    cause: error,
  });
}

/** SQLite's own errors (`SQLITE_…` codes), which reading `keys.db` can throw. */
const isSqliteError = (error: unknown) =>
  typeof (error as { code?: unknown } | null)?.code === 'string' &&
  (error as { code: string }).code.startsWith('SQLITE_');

/** The encryption key, its source named when it cannot be used (`SecretBox` does not say which). */
function loadSecrets(config: Readonly<Config>): SecretBox {
  try {
    return SecretBox.load(config.secretEncryptionKey, config.dataDir);
  } catch (error) {
    // Looking for sealed secrets reads keys.db: a damaged one is that file's fault.
    if (isSqliteError(error)) throw keysFileError(config, error);
    const message = error instanceof Error ? error.message : String(error);
    const keyFile = join(config.dataDir, 'secret.key');
    if (message.includes('SECRET_ENCRYPTION_KEY') || message.includes(keyFile)) throw error;
    const source =
      config.secretEncryptionKey !== null ? 'SECRET_ENCRYPTION_KEY' : `DATA_DIR/secret.key (${keyFile})`;
    throw new Error(`${source}: ${message}`, { cause: error });
  }
}
