// A throw-away certificate authority and a certificate it signed for localhost,
// 127.0.0.1 and ::1, with the CA written to a file for NODE_EXTRA_CA_CERTS. Processes
// started with that variable verify the local receiver like any public endpoint, with no
// TLS exceptions. Used by the test run (test/global-setup.ts) and the webhook benchmark.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import selfsigned from 'selfsigned';
import { LOCALHOST_SERVER_EXTENSIONS } from '../../server/http/tls.ts';

export type LocalCa = { key: string; cert: string; caFile: string };

export async function createLocalCa(options: { dir: string; name: string; validForMs: number }): Promise<LocalCa> {
  const notBeforeDate = new Date(Date.now() - 60_000);
  const notAfterDate = new Date(Date.now() + options.validForMs);
  const common = { keyType: 'ec', curve: 'P-256', algorithm: 'sha256', notBeforeDate, notAfterDate } as const;
  const ca = await selfsigned.generate([{ name: 'commonName', value: `${options.name} CA` }], {
    ...common,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const leaf = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    ...common,
    ca: { key: ca.private, cert: ca.cert },
    extensions: LOCALHOST_SERVER_EXTENSIONS,
  });
  const caFile = join(options.dir, 'local-ca.pem');
  // The variable holds one file: keep any CA the environment already adds (a proxy's).
  const inherited = process.env.NODE_EXTRA_CA_CERTS ? await readFile(process.env.NODE_EXTRA_CA_CERTS, 'utf8').catch(() => '') : '';
  await writeFile(caFile, `${inherited.trim()}\n${ca.cert}`.trim() + '\n');
  return { key: leaf.private, cert: leaf.cert, caFile };
}
