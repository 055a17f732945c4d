/**
 * Opens the embedded key store for a configuration: `DATA_DIR/keys.db`, secrets sealed.
 * Refused, before anything is written, when the encryption key is not the one the stored secrets
 * were sealed with: no key file is made beside sealed secrets (SecretBox.load), and the store
 * checks the key opens what it holds (SqliteKeyStore's constructor, as for the service).
 */
import { join } from 'node:path';
import type { Config } from '../../app/config.ts';
import { SecretBox } from './secret-box.ts';
import { SqliteKeyStore } from './sqlite-key-store.ts';

/** The key store's file in DATA_DIR. */
export const KEYS_FILE = 'keys.db';

export function openKeyStore(config: Pick<Config, 'dataDir' | 'secretEncryptionKey'>): SqliteKeyStore {
  const box = SecretBox.load(config.secretEncryptionKey, config.dataDir);
  return new SqliteKeyStore(join(config.dataDir, KEYS_FILE), box);
}
