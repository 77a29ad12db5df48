// A throw-away CA and a localhost certificate it signed, for the benchmark's receiver.
// The worker process trusts the CA through NODE_EXTRA_CA_CERTS, so deliveries go
// through ordinary certificate checks, as in production.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import selfsigned from 'selfsigned';

export type BenchTls = { key: string; cert: string; caFile: string };

export async function createBenchTls(dir: string): Promise<BenchTls> {
  const notBeforeDate = new Date(Date.now() - 60_000);
  const notAfterDate = new Date(Date.now() + 24 * 3600_000);
  const common = { keyType: 'ec', curve: 'P-256', algorithm: 'sha256', notBeforeDate, notAfterDate } as const;
  const ca = await selfsigned.generate([{ name: 'commonName', value: 'webhook fan-out bench CA' }], {
    ...common,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const leaf = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    ...common,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const caFile = join(dir, 'bench-ca.pem');
  // The variable holds one file: keep any CA the environment already adds.
  const inherited = process.env.NODE_EXTRA_CA_CERTS ? await readFile(process.env.NODE_EXTRA_CA_CERTS, 'utf8').catch(() => '') : '';
  await writeFile(caFile, `${inherited.trim()}\n${ca.cert}`.trim() + '\n');
  return { key: leaf.private, cert: leaf.cert, caFile };
}
