// The HTTPS certificate: the operator's PEM files, or a self-signed one for
// localhost generated once into DATA_DIR and reused on every later start.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import selfsigned, { type CertificateExtension } from 'selfsigned';
import type { Config } from '../config.ts';

export type TlsMaterial = { key: string; cert: string; generated: boolean };

/** A TLS server certificate's extensions for localhost, 127.0.0.1 and ::1. */
export const LOCALHOST_SERVER_EXTENSIONS: CertificateExtension[] = [
  { name: 'basicConstraints', cA: false },
  { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
  { name: 'extKeyUsage', serverAuth: true },
  {
    name: 'subjectAltName',
    altNames: [
      { type: 2, value: 'localhost' },
      { type: 7, ip: '127.0.0.1' },
      { type: 7, ip: '::1' },
    ],
  },
];

export async function loadTlsMaterial(config: Config): Promise<TlsMaterial> {
  if (config.TLS_CERT_FILE && config.TLS_KEY_FILE) {
    const [cert, key] = await Promise.all([readFile(config.TLS_CERT_FILE, 'utf8'), readFile(config.TLS_KEY_FILE, 'utf8')]);
    return { key, cert, generated: false };
  }
  const certFile = path.join(config.DATA_DIR, 'tls-cert.pem');
  const keyFile = path.join(config.DATA_DIR, 'tls-key.pem');
  try {
    const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    return { key, cert, generated: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const notBeforeDate = new Date();
  const notAfterDate = new Date(notBeforeDate);
  notAfterDate.setFullYear(notAfterDate.getFullYear() + 5);
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: LOCALHOST_SERVER_EXTENSIONS,
  });
  await mkdir(config.DATA_DIR, { recursive: true });
  await writeFile(keyFile, pems.private, { mode: 0o600 });
  await writeFile(certFile, pems.cert);
  return { key: pems.private, cert: pems.cert, generated: true };
}
