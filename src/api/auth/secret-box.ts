/**
 * API secrets at rest: AES-256-GCM with a 32-byte key from configuration (or, when none is
 * configured, a key file `DATA_DIR/secret.key` created once with mode 0600, and only while
 * `DATA_DIR/keys.db` holds nothing sealed with another key).
 * Stored form: base64(iv[12] || tag[16] || ciphertext). A wrong key or tampering fails loudly.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileDurably } from '../../store/durable-file.ts';
import { holdsSealedSecrets } from './sqlite-key-store.ts';

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static fromKey(key: Buffer): SecretBox {
    if (key.length !== 32) throw new Error('the secret encryption key must be 32 bytes');
    return new SecretBox(key);
  }

  /** From config text: 64 hex characters or base64 of 32 bytes. */
  static fromText(text: string): SecretBox {
    const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
    return SecretBox.fromKey(key);
  }

  /**
   * The configured key, else the key file under dataDir, created on first use: not when the key
   * store there already holds secrets (they were sealed with a key this process was not given,
   * and a new key would open none of them while sealing new ones the service cannot open).
   */
  static load(configuredKey: string | null, dataDir: string): SecretBox {
    if (configuredKey !== null) return SecretBox.fromText(configuredKey);
    const path = join(dataDir, 'secret.key');
    if (!existsSync(path)) {
      const keysFile = join(dataDir, 'keys.db');
      if (holdsSealedSecrets(keysFile)) {
        throw new Error(
          `the API secrets stored in ${keysFile} were sealed with an encryption key that is not available here (SECRET_ENCRYPTION_KEY is not set and there is no ${path}): set SECRET_ENCRYPTION_KEY to the key they were sealed with, or put back the original ${path}; no new key file was made`,
        );
      }
      mkdirSync(dataDir, { recursive: true });
      // Durable before any secret is sealed with it: a lost key file makes every key unreadable.
      writeFileDurably(path, randomBytes(32).toString('hex'), { exclusive: true });
    }
    return SecretBox.fromText(readFileSync(path, 'utf8').trim());
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  open(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
