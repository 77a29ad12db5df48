// The service's one master secret (server/secrets.ts derives every key from it): SECRET_KEY
// when set, else a random key generated once into DATA_DIR and read back on every start.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const SECRET_FILE = 'secret.key';

/** SECRET_KEY when set; otherwise a random key generated once into DATA_DIR. */
export async function loadMasterSecret(configured: string | undefined, dataDir: string): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'utf8');
  const file = path.join(dataDir, SECRET_FILE);
  try {
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'base64url');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const secret = randomBytes(32);
  // 'wx' fails if another process won the race; then read what it wrote.
  try {
    await writeFile(file, secret.toString('base64url') + '\n', { flag: 'wx', mode: 0o600 });
    await chmod(file, 0o600);
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'base64url');
  }
}
