/** Opens the embedded key store for a configuration: `DATA_DIR/keys.db`, secrets sealed. */
import { join } from 'node:path';
import type { Config } from '../../app/config.ts';
import { SecretBox } from './secret-box.ts';
import { SqliteKeyStore } from './sqlite-key-store.ts';

export function openKeyStore(config: Pick<Config, 'dataDir' | 'secretEncryptionKey'>): SqliteKeyStore {
  const box = SecretBox.load(config.secretEncryptionKey, config.dataDir);
  return new SqliteKeyStore(join(config.dataDir, 'keys.db'), box);
}
